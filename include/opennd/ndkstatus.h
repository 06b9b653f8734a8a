/* OpenND NDK: the NTSTATUS codes NDKPI calls and callbacks use.
 *
 * Values are those of the Windows ntstatus.h / ndis.h names. The ND2 status
 * codes (ndstatus.h, ND_*) are numerically the NTSTATUS of the same meaning,
 * e.g. ND_CANCELED == STATUS_CANCELLED; the NDK layer translates the few that
 * are not (COM HRESULTs) in one table (ndk/translate.cpp).
 * The STATUS_* names are defined once, in <opennd/win32.h> (which ND
 * programs see through <ndspi.h> too); this header adds the NDIS ones.
 */
#ifndef OPENND_NDKSTATUS_H
#define OPENND_NDKSTATUS_H

#include "opennd/ndktypes.h"

#define OPENND_NDK_STATUS(v) ((NTSTATUS)(v##u))

/* NDIS codes returned when opening an adapter. */
#ifndef NDIS_STATUS_BAD_VERSION
#define NDIS_STATUS_BAD_VERSION OPENND_NDK_STATUS(0xC0010004)
#endif
#ifndef NDIS_STATUS_ADAPTER_NOT_READY
#define NDIS_STATUS_ADAPTER_NOT_READY OPENND_NDK_STATUS(0xC0010011)
#endif

#endif /* OPENND_NDKSTATUS_H */
