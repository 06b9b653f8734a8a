/* OpenND's NDK extension interfaces, what NdkQueryExtension answers for.
 * NDKPI defines no standard extension; a provider may define its own, named
 * by GUID and version. OpenND has one:
 *
 * OPENND_NDK_ND2_INTERFACE_ID, version 1.0: the ND2 object under an NDK
 * object. libopennd_ndk is a layer over the ND2 objects of any provider
 * (IND2Adapter under NDK_ADAPTER, IND2QueuePair under NDK_QP, ...), so a
 * consumer that needs something only the ND2 interface or a provider's own
 * ND2 extension has can reach it without opening the adapter twice. Every
 * object type answers except NDK_PD, which has no ND2 counterpart
 * (STATUS_NOT_SUPPORTED).
 *
 *   NDK_EXTENSION_INTERFACE ext;
 *   GUID id = OPENND_NDK_ND2_INTERFACE_ID;
 *   NDK_VERSION v = {1, 0};
 *   if (qp->Dispatch->NdkQueryExtension(&qp->Header, &id, v, &ext) == STATUS_SUCCESS) {
 *       const OPENND_NDK_ND2_DISPATCH *nd2 = ext.Dispatch;
 *       IND2QueuePair *p;  // C++: nd2->GetNd2Interface(&qp->Header, &IID_IND2QueuePair, (VOID **)&p)
 *   }
 *
 * The object stays the NDK layer's: the reference GetNd2Interface returns is
 * the caller's to Release. Release it before closing the NDK object: the
 * close gives up only the layer's own reference, so what the ND2 object's
 * last Release does (a region deregistered, a connection ended, a listener
 * stopped) waits for the caller's. Calls that change
 * the object's state behind the NDK layer (Disconnect, Deregister, Close,
 * requests whose completions the NDK layer would then receive) are the
 * caller's to answer for; queries and a provider's extensions are safe. */
#ifndef OPENND_NDK_EXTENSIONS_H
#define OPENND_NDK_EXTENSIONS_H

#include "ndkpi.h"

OPENND_EXTERN_C_BEGIN

/* {4F70656E-4E44-4E44-4B00-4E4432000001} */
#define OPENND_NDK_ND2_INTERFACE_ID \
    {0x4F70656E, 0x4E44, 0x4E44, {0x4B, 0x00, 0x4E, 0x44, 0x32, 0x00, 0x00, 0x01}}
#define OPENND_NDK_ND2_INTERFACE_VERSION_MAJOR 1
#define OPENND_NDK_ND2_INTERFACE_VERSION_MINOR 0

typedef struct _OPENND_NDK_ND2_DISPATCH {
    /* QueryInterface(*InterfaceId) on the ND2 object under `Object`, which
     * must be an object whose NdkQueryExtension returned this table. On
     * STATUS_SUCCESS *Interface holds a reference for the caller.
     * STATUS_NOT_SUPPORTED: the ND2 object has no such interface (or the
     * object is a PD); STATUS_INVALID_PARAMETER: a null argument or an
     * unknown object. */
    NTSTATUS (*GetNd2Interface)(NDK_OBJECT_HEADER *Object, const GUID *InterfaceId, VOID **Interface);
} OPENND_NDK_ND2_DISPATCH;

OPENND_EXTERN_C_END

#endif
