/* Provider-facing overlapped plumbing, implemented by libopennd.
 *
 * IND2Adapter::CreateOverlappedFile returns a handle made here. Objects that
 * take an overlapped file (CQ, MR, SRQ, connector, listener) acquire its
 * completion target at creation and keep it until they are destroyed, so a
 * client closing the handle early never causes a use after free.
 *
 * OpenNdCompleteOverlapped delivers one completion with Windows semantics:
 *  1. InternalHigh = bytes, then Internal = status (zero-extended), with
 *     release ordering, so a reader that sees a packet sees the final status;
 *  2. if hEvent is set, the event (hEvent with bit 0 cleared) is signalled;
 *  3. unless hEvent has bit 0 set, a packet (key, ov, bytes) is posted to the
 *     completion port the file is bound to, if any;
 *  4. the file's descriptor (OpenNdHandleFd) becomes readable.
 * Call it exactly once per request that returned ND_PENDING, and never for one
 * that returned ND_SUCCESS or an error (skip-on-success).
 *
 * A provider that calls OpenNdBeginOverlapped when a request starts gets two
 * more Windows behaviours: the event is reset as the request begins (as the
 * I/O manager does), and the completion signals the event that hEvent named
 * then, even if the application has closed that handle since and the value
 * now names another event. It completes such a request with
 * OpenNdCompleteOverlappedEx.
 */
#ifndef OPENND_OVERLAPPED_FILE_H
#define OPENND_OVERLAPPED_FILE_H

#include "opennd/win32.h"

OPENND_EXTERN_C_BEGIN

typedef struct OpenNdCompletionTarget OpenNdCompletionTarget;

/* A new overlapped file handle; NULL with ERROR_NOT_ENOUGH_MEMORY on failure. */
OPENND_API HANDLE OpenNdCreateOverlappedFile(void);
/* A counted reference to the file's completion target; NULL (and
 * ERROR_INVALID_HANDLE) if h is not an open overlapped file. */
OPENND_API OpenNdCompletionTarget *OpenNdAcquireCompletionTarget(HANDLE h);
OPENND_API void OpenNdReleaseCompletionTarget(OpenNdCompletionTarget *target);
OPENND_API void OpenNdCompleteOverlapped(OpenNdCompletionTarget *target, OVERLAPPED *ov, HRESULT status,
                                         ULONG_PTR bytes);

typedef struct OpenNdEventRef OpenNdEventRef;
/* A request starts: resets the event hEvent names (bit 0 cleared) and returns
 * a reference to it, or NULL if hEvent is not set or is not an open event.
 * Call it only once the request is accepted (a refused request must not touch
 * the event of the one in flight). */
OPENND_API OpenNdEventRef *OpenNdBeginOverlapped(OVERLAPPED *ov);
/* OpenNdCompleteOverlapped for a request started with OpenNdBeginOverlapped:
 * signals `event` rather than looking hEvent up, and releases it (NULL: as
 * OpenNdCompleteOverlapped). With a NULL target only steps 1 and 2 happen. */
OPENND_API void OpenNdCompleteOverlappedEx(OpenNdCompletionTarget *target, OVERLAPPED *ov, HRESULT status,
                                           ULONG_PTR bytes, OpenNdEventRef *event);

OPENND_EXTERN_C_END

#endif
