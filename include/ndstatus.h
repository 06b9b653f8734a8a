/* NetworkDirect status codes (ndstatus.mc values). Each is numerically the
 * NTSTATUS of the same name. The names, values and meanings are listed once,
 * in opennd/status_list.h, which this header and ndstatus_name() share. */
#ifndef OPENND_NDSTATUS_H
#define OPENND_NDSTATUS_H

#include "opennd/win32.h"
#include "opennd/status_list.h"

#ifdef __cplusplus
#define OPENND_STATUS_DEFINE(name, value, meaning) inline constexpr HRESULT name = (HRESULT)(value##u);
#else
#define OPENND_STATUS_DEFINE(name, value, meaning) enum { name = (HRESULT)(value##u) };
#endif
OPENND_STATUS_LIST(OPENND_STATUS_DEFINE)
#undef OPENND_STATUS_DEFINE

/* ND v1 names kept for source compatibility. */
#define ND_LOCAL_LENGTH ND_DATA_OVERRUN
#define ND_INVALIDATION_ERROR ND_INVALID_DEVICE_REQUEST

OPENND_EXTERN_C_BEGIN
/* "ND_ACCESS_VIOLATION" for 0xC0000005, or NULL for a value that is no ND status. */
OPENND_API const char *OpenNdStatusName(HRESULT hr);
/* One-line meaning of an ND status ("" if unknown). */
OPENND_API const char *OpenNdStatusMeaning(HRESULT hr);
/* Name if known, else the hex value: writes into buf and returns it. */
OPENND_API const char *OpenNdStatusText(HRESULT hr, char *buf, size_t len);
OPENND_EXTERN_C_END

#endif
