// One catalogued provider library: loading it with dlopen, getting its
// IND2Provider through DllGetClassObject, and unloading it when
// DllCanUnloadNow says it is idle. Every refusal is logged with its reason.
#pragma once

#include <string>

#include "ndspi.h"

namespace opennd {

class ProviderLibrary {
public:
    ProviderLibrary(const GUID &id, std::string name, std::string path, int version);
    ~ProviderLibrary();
    ProviderLibrary(const ProviderLibrary &) = delete;
    ProviderLibrary &operator=(const ProviderLibrary &) = delete;

    const GUID &id() const { return id_; }
    const std::string &name() const { return name_; }
    const std::string &path() const { return path_; }
    int version() const { return version_; }
    bool loaded() const { return dl_ != nullptr; }
    // Why the last Load or GetProvider failed ("" if it did not).
    const std::string &failure() const { return failure_; }

    // A new IND2Provider (AddRef'ed), loading the library first if needed.
    // ND_DEVICE_NOT_READY with failure() set if it cannot be had.
    HRESULT GetProvider(IND2Provider **out);
    // Unloads the library if it is loaded and DllCanUnloadNow returns S_OK.
    // True if the library is not loaded afterwards.
    bool TryUnload();
    // Points the record at a new catalog path (unloads first if it can).
    void SetPath(const std::string &path, int version);

private:
    HRESULT Load();
    // Records why the provider is skipped and says so once (a warning, or
    // only at Info level when `quiet`); ND_DEVICE_NOT_READY.
    HRESULT Fail(std::string why, bool quiet = false);

    GUID id_;
    std::string name_;
    std::string path_;
    int version_;
    void *dl_ = nullptr;
    DLLGETCLASSOBJECT get_class_object_ = nullptr;
    DLLCANUNLOADNOW can_unload_now_ = nullptr;
    std::string failure_;
    std::string logged_;  // the last failure logged, so a refresh does not repeat it
};

}  // namespace opennd
