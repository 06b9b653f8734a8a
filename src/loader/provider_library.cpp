#include "loader/provider_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>

#include "opennd/log.h"
#include "opennd/catalog.h"

namespace opennd {

ProviderLibrary::ProviderLibrary(const GUID &id, std::string name, std::string path, int version)
    : id_(id), name_(std::move(name)), path_(std::move(path)), version_(version) {}

ProviderLibrary::~ProviderLibrary() { TryUnload(); }

HRESULT ProviderLibrary::Fail(std::string why, bool quiet) {
    failure_ = std::move(why);
    if (failure_ != logged_) {
        if (quiet)
            OPENND_LOG(Info, "provider %s (%s) skipped: %s", name_.c_str(), path_.c_str(), failure_.c_str());
        else
            OPENND_LOG(Warn, "provider %s (%s) skipped: %s", name_.c_str(), path_.c_str(), failure_.c_str());
        logged_ = failure_;
    }
    return ND_DEVICE_NOT_READY;
}

HRESULT ProviderLibrary::Load() {
    if (dl_) return ND_SUCCESS;
    if (version_ == ND_VERSION_1) return Fail("ND v1 providers are not supported by OpenND");
    // An entry whose library is not there at all is what removing (not
    // purging) a provider's package leaves: its catalog file is a conffile.
    // Skipped without a warning on every program's start, as libibverbs
    // skips a driver file whose library is gone; ndinstall -l and ndinfo
    // still show it. Anything else wrong with a library is warned about.
    struct stat st;
    if (!path_.empty() && path_[0] == '/' && lstat(path_.c_str(), &st) != 0 && errno == ENOENT)
        return Fail("library " + path_ + " is not installed", true);
    std::string refused;
    void *dl = LoadProviderLibrary(path_, RTLD_NOW | RTLD_LOCAL, &refused);
    if (!dl) return Fail("library refused: " + refused);
    auto get = reinterpret_cast<DLLGETCLASSOBJECT>(dlsym(dl, "DllGetClassObject"));
    auto can_unload = reinterpret_cast<DLLCANUNLOADNOW>(dlsym(dl, "DllCanUnloadNow"));
    if (!get || !can_unload) {
        dlclose(dl);
        return Fail(std::string("library does not export ") + (!get ? "DllGetClassObject" : "DllCanUnloadNow"));
    }
    dl_ = dl;
    get_class_object_ = get;
    can_unload_now_ = can_unload;
    OPENND_LOG(Info, "provider %s loaded from %s", name_.c_str(), path_.c_str());
    return ND_SUCCESS;
}

HRESULT ProviderLibrary::GetProvider(IND2Provider **out) {
    *out = nullptr;
    HRESULT hr = Load();
    if (FAILED(hr)) return hr;
    void *pv = nullptr;
    hr = get_class_object_(id_, IID_IND2Provider, &pv);
    if (FAILED(hr) || !pv) {
        char text[32];
        return Fail(std::string("DllGetClassObject(IID_IND2Provider) failed: ") +
                    OpenNdStatusText(FAILED(hr) ? hr : E_POINTER, text, sizeof text));
    }
    failure_.clear();
    logged_.clear();
    *out = static_cast<IND2Provider *>(pv);
    return ND_SUCCESS;
}

bool ProviderLibrary::TryUnload() {
    if (!dl_) return true;
    if (can_unload_now_() != S_OK) return false;
    dlclose(dl_);
    dl_ = nullptr;
    get_class_object_ = nullptr;
    can_unload_now_ = nullptr;
    OPENND_LOG(Info, "provider %s unloaded", name_.c_str());
    return true;
}

void ProviderLibrary::SetPath(const std::string &path, int version) {
    if (path == path_ && version == version_) return;
    if (!TryUnload()) return;  // still in use: keep the loaded one until it is idle
    path_ = path;
    version_ = version;
    logged_.clear();
}

}  // namespace opennd
