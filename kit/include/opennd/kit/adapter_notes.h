// IOpenNdAdapterNotes (opennd/adapter_notes.h) for any provider: lines of
// text about how an adapter moves data, which ndinfo prints. An adapter
// answers QueryInterface(IID_IOpenNdAdapterNotes) with AdapterNotes::Make.
#pragma once

#include <cstring>
#include <string>

#include "opennd/adapter_notes.h"
#include "opennd/kit/com.h"

namespace opennd::kit {

OPENND_KIT_IIDS(IOpenNdAdapterNotes, &IID_IOpenNdAdapterNotes);

class AdapterNotes : public Unknown<IOpenNdAdapterNotes> {
public:
    // For an adapter's QueryInterface: S_OK with *ppv the notes.
    static HRESULT Make(std::string text, void **ppv) {
        *ppv = static_cast<IOpenNdAdapterNotes *>(new AdapterNotes(std::move(text)));
        return S_OK;
    }
    HRESULT STDMETHODCALLTYPE GetNotes(char *buffer, ULONG *size) override {
        if (!size) return ND_INVALID_PARAMETER_2;
        if (!buffer || *size < text_.size() + 1) {
            *size = static_cast<ULONG>(text_.size() + 1);
            return ND_BUFFER_OVERFLOW;
        }
        std::memcpy(buffer, text_.c_str(), text_.size() + 1);
        *size = static_cast<ULONG>(text_.size() + 1);
        return ND_SUCCESS;
    }

private:
    explicit AdapterNotes(std::string text) : text_(std::move(text)) {}
    const std::string text_;
};

}  // namespace opennd::kit
