// A provider library that only has the two exports ndinstall checks for.
// Built twice; the second copy lacks DllCanUnloadNow.
#include "opennd/win32.h"

extern "C" OPENND_API HRESULT DllGetClassObject(REFCLSID, REFIID, void **ppv) {
    if (ppv) *ppv = nullptr;
    return E_NOINTERFACE;
}

#ifndef CATALOG_TEST_OMIT_CAN_UNLOAD
extern "C" OPENND_API HRESULT DllCanUnloadNow() { return S_OK; }
#endif
