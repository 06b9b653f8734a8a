/* Functions of c_header_check.c (compiled as C), called from C++ tests. */
#pragma once

#include <stddef.h>

#include "ndkpi.h"

enum {
    NDK_C_OBJECT_HEADER,
    NDK_C_RESULT,
    NDK_C_RESULT_EX,
    NDK_C_SGE,
    NDK_C_ADAPTER_INFO,
    NDK_C_QP_DISPATCH,
    NDK_C_CONNECTOR_DISPATCH,
    NDK_C_ADAPTER_DISPATCH,
    NDK_C_MDL
};

OPENND_EXTERN_C_BEGIN
size_t NdkCSizeOf(int which);
NTSTATUS NdkCOpenClose(USHORT *major, USHORT *minor);
OPENND_EXTERN_C_END
