/* Functions of c_surface.c (compiled as C), called from C++ tests. */
#pragma once

#include <stddef.h>

#include "ndspi.h"

OPENND_EXTERN_C_BEGIN
int Win32CMin(int a, int b);
int Win32CMax(int a, int b);
/* 1 if CONTAINING_RECORD and FIELD_OFFSET work in C. */
int Win32CContainingRecord(void);
/* 1 if the Interlocked calls return Windows' values in C. */
int Win32CInterlocked(void);
/* switch on an HRESULT with STATUS_* case labels. */
int Win32CStatus(HRESULT hr);
/* 1 if the heap, a thread, GetSystemInfo/Times and WSAStringToAddress work from C. */
int Win32CCalls(void);
size_t Win32CSizeOfSystemInfo(void);
OPENND_EXTERN_C_END
