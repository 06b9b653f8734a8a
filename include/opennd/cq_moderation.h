/* OpenND extension: interrupt moderation of a completion queue, what
 * NDKPI's NdkControlCqInterruptModeration asks of a provider and ND2 has no
 * call for. Query it with IND2CompletionQueue::QueryInterface(
 * IID_IOpenNdCqModeration); every CQ of a provider built on the provider
 * kit answers it, a provider that does not simply has no moderation.
 *
 * Moderation defers the completion of an armed Notify (the "interrupt")
 * that new entries satisfy, until `count` entries are queued or
 * `interval_us` microseconds have passed since the Notify was first
 * satisfied, whichever comes first. An error entry, and an overrun,
 * complete it at once. Nothing is lost: every entry stays queued, and
 * GetResults hands out entries whether or not their notification fired. */
#ifndef OPENND_CQ_MODERATION_H
#define OPENND_CQ_MODERATION_H

#include "ndspi.h"

#ifdef __cplusplus
/* {4F70656E-4E44-4D6F-6465-726174650001} */
OPENND_DEFINE_GUID(IID_IOpenNdCqModeration, 0x4F70656E, 0x4E44, 0x4D6F, 0x64, 0x65, 0x72, 0x61, 0x74, 0x65, 0x00,
                   0x01);

struct IOpenNdCqModeration : public IUnknown {
    /* NDKPI's values: interval_us 0 turns moderation off whatever the
     * count; interval_us 0xFFFFFFFF means no time limit (the count alone).
     * count 0 or 1 turns it off whatever the interval; 0xFFFFFFFF, or more
     * than the CQ holds, means no count limit (the interval alone).
     * ND_INVALID_PARAMETER_MIX when neither limit is left (a Notify that
     * could wait forever). Takes effect for the next trigger. */
    STDMETHOD(Moderate)(ULONG interval_us, ULONG count) PURE;
};
#endif

#endif
