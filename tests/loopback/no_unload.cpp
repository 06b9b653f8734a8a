// A provider library that forgot DllCanUnloadNow: the loader refuses it.
#include "ndspi.h"

extern "C" OPENND_API HRESULT DllGetClassObject(REFCLSID, REFIID, void **ppv) {
    if (ppv) *ppv = nullptr;
    return E_NOINTERFACE;
}
