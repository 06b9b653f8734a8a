// Translation between ND2 and NDK values: statuses, work-request flags,
// memory-registration flags, completion types, adapter information. Each
// mapping is one table in translate.cpp.
#pragma once

#include "ndkpi.h"
#include "ndspi.h"
#include "opennd/nd_extensions.h"

namespace opennd::ndk {

// The NTSTATUS for an ND2 status. ND2 codes are numerically NTSTATUS values
// (ND_CANCELED == STATUS_CANCELLED); COM HRESULTs (E_OUTOFMEMORY, ...) are
// mapped to their NTSTATUS meaning.
NTSTATUS StatusFromNdSlow(HRESULT hr);
inline NTSTATUS StatusFromNd(HRESULT hr) { return hr == ND_SUCCESS ? STATUS_SUCCESS : StatusFromNdSlow(hr); }
// The same for calls that report a required buffer size (Query, addresses,
// private data): ND2 says ND_BUFFER_OVERFLOW, NDK says STATUS_BUFFER_TOO_SMALL.
NTSTATUS SizeStatusFromNd(HRESULT hr);
// Bind of a listener or connector: ND2 providers report an address and port
// in use as 0xC0000238 (COMPAT-NOTES); NDK names STATUS_SHARING_VIOLATION.
NTSTATUS BindStatusFromNd(HRESULT hr);

// Work-request flags. ND2 numbers them differently (ND_OP_FLAG_ALLOW_READ 0x8,
// ALLOW_WRITE 0x10, INLINE 0x20 against NDK's 0x8, 0x30, 0x40). Hints ND2 has
// no room for (DEFER) are dropped; flags whose feature OpenND lacks
// (RDMA_READ_LOCAL_INVALIDATE) fail with STATUS_NOT_SUPPORTED; unknown bits
// with STATUS_INVALID_PARAMETER. Returns STATUS_SUCCESS and sets *nd.
NTSTATUS OpFlagsToNdSlow(ULONG ndk, ULONG *nd);
inline NTSTATUS OpFlagsToNd(ULONG ndk, ULONG *nd) {
    if (ndk == 0) {
        *nd = 0;
        return STATUS_SUCCESS;
    }
    return OpFlagsToNdSlow(ndk, nd);
}

// NDK_MR_FLAG_* to ND_MR_FLAG_* (unknown bits: STATUS_INVALID_PARAMETER).
NTSTATUS MrFlagsToNd(ULONG ndk, ULONG *nd);

NDK_OPERATION_TYPE OperationFromNd(ND2_REQUEST_TYPE type);
void ResultFromNd(const ND2_RESULT &in, NDK_RESULT *out);
void ResultExFromNd(const ND2_RESULT &in, NDK_RESULT_EX *out);
// A receive whose Send invalidated a token is NdkOperationTypeReceiveAndInvalidate
// with the token in TypeSpecificCompletionOutput.
void ResultExFromNd(const OPENND_RESULT_EX &in, NDK_RESULT_EX *out);

// ND2_ADAPTER_INFO to NDK_ADAPTER_INFO, reporting `version`; `extensions`:
// the provider's OPENND_EXT_* bits.
void AdapterInfoFromNd(const ND2_ADAPTER_INFO &in, ULONG extensions, NDK_VERSION version, NDK_ADAPTER_INFO *out);

// How many pages a fast-register MR may map (FRMRPageCount): 0 without the
// provider's OPENND_EXT_FAST_REGISTER.
ULONG FastRegisterPages(const ND2_ADAPTER_INFO &in, ULONG extensions);

// The MDL chain describes at least `length` virtually contiguous bytes.
bool MdlCovers(const MDL *mdl, SIZE_T length);

// NDK_SGE and ND2_SGE have the same layout: SGE arrays are passed through.
inline const ND2_SGE *SgesToNd(const NDK_SGE *sge) { return reinterpret_cast<const ND2_SGE *>(sge); }

}  // namespace opennd::ndk
