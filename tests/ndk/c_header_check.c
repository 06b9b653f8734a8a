/* <ndkpi.h> compiled as C (C17, -Wall -Wextra -Werror): the header is valid C
 * and C sees the same layouts as C++ (header_test.cpp compares). */
#include <ndkpi.h>
#include <opennd/ndk_extensions.h>

#include "c_header_check.h"

static VOID CloseDone(PVOID context) { (void)context; }

size_t NdkCSizeOf(int which) {
    switch (which) {
    case NDK_C_OBJECT_HEADER: return sizeof(NDK_OBJECT_HEADER);
    case NDK_C_RESULT: return sizeof(NDK_RESULT);
    case NDK_C_RESULT_EX: return sizeof(NDK_RESULT_EX);
    case NDK_C_SGE: return sizeof(NDK_SGE);
    case NDK_C_ADAPTER_INFO: return sizeof(NDK_ADAPTER_INFO);
    case NDK_C_QP_DISPATCH: return sizeof(NDK_QP_DISPATCH);
    case NDK_C_CONNECTOR_DISPATCH: return sizeof(NDK_CONNECTOR_DISPATCH);
    case NDK_C_ADAPTER_DISPATCH: return sizeof(NDK_ADAPTER_DISPATCH);
    case NDK_C_MDL: return sizeof(MDL);
    default: return 0;
    }
}

/* A C consumer: open the loopback adapter, read its version, close it. */
NTSTATUS NdkCOpenClose(USHORT *major, USHORT *minor) {
    struct sockaddr_in a;
    NDK_ADAPTER *adapter = NULL;
    NTSTATUS status;
    NDK_VERSION v = {NDK_VERSION_MAJOR, NDK_VERSION_MINOR};
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    status = NdkOpenAdapterByAddress(v, (const SOCKADDR *)&a, sizeof a, &adapter);
    if (!NT_SUCCESS(status)) return status;
    *major = adapter->Header.Version.Major;
    *minor = adapter->Header.Version.Minor;
    return NdkCloseAdapter(adapter, CloseDone, NULL);
}
