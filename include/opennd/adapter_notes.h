/* OpenND extension: a provider may describe how an adapter moves data
 * (which data path, what limits it), for tools such as ndinfo. Query it with
 * IND2Adapter::QueryInterface(IID_IOpenNdAdapterNotes); providers that do not
 * answer it simply have no notes. */
#ifndef OPENND_ADAPTER_NOTES_H
#define OPENND_ADAPTER_NOTES_H

#include "ndspi.h"

#ifdef __cplusplus
/* {4F70656E-4E44-4E6F-7465-730000000001} */
OPENND_DEFINE_GUID(IID_IOpenNdAdapterNotes, 0x4F70656E, 0x4E44, 0x4E6F, 0x74, 0x65, 0x73, 0x00, 0x00, 0x00, 0x00,
                   0x01);

struct IOpenNdAdapterNotes : public IUnknown {
    /* UTF-8 text, one note per line, NUL-terminated. ND_BUFFER_OVERFLOW with
     * *size = bytes needed (including the NUL) when the buffer is short. */
    STDMETHOD(GetNotes)(char *buffer, ULONG *size) PURE;
};
#endif

#endif
