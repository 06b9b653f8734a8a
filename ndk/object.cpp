// Object basics shared by every NDK object type.
#include "object.h"

#include "adapter.h"

namespace opennd::ndk {

Object::Object(Adapter *adapter, NDK_OBJECT_TYPE type) : adapter_(adapter), type_(type) {}

Object::~Object() = default;

void Object::InitHeader(NDK_OBJECT_HEADER *header) {
    *header = NDK_OBJECT_HEADER{};
    header->Version = NDK_VERSION{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};
    header->ObjectType = type_;
}

void Object::OnRequestDone(Request *request, HRESULT status) {
    if (request->done) request->done(request->context, StatusFromNd(status));
}

Object *FromHeader(NDK_OBJECT_HEADER *header) {
    if (!header) return nullptr;
    // The header is the first member of the public struct, itself the first
    // member of its Face: the three addresses are the same object.
    switch (header->ObjectType) {
    case NdkObjectTypeAdapter: return Face<NDK_ADAPTER>::Of(reinterpret_cast<NDK_ADAPTER *>(header))->self;
    case NdkObjectTypeQp: return Face<NDK_QP>::Of(reinterpret_cast<NDK_QP *>(header))->self;
    case NdkObjectTypeCq: return Face<NDK_CQ>::Of(reinterpret_cast<NDK_CQ *>(header))->self;
    case NdkObjectTypeMr: return Face<NDK_MR>::Of(reinterpret_cast<NDK_MR *>(header))->self;
    case NdkObjectTypeMw: return Face<NDK_MW>::Of(reinterpret_cast<NDK_MW *>(header))->self;
    case NdkObjectTypePd: return Face<NDK_PD>::Of(reinterpret_cast<NDK_PD *>(header))->self;
    case NdkObjectTypeConnector: return Face<NDK_CONNECTOR>::Of(reinterpret_cast<NDK_CONNECTOR *>(header))->self;
    case NdkObjectTypeListener: return Face<NDK_LISTENER>::Of(reinterpret_cast<NDK_LISTENER *>(header))->self;
    case NdkObjectTypeSrq: return Face<NDK_SRQ>::Of(reinterpret_cast<NDK_SRQ *>(header))->self;
    case NdkObjectTypeSharedEndpoint:
        return Face<NDK_SHARED_ENDPOINT>::Of(reinterpret_cast<NDK_SHARED_ENDPOINT *>(header))->self;
    default: return nullptr;
    }
}

NTSTATUS CloseObject(NDK_OBJECT_HEADER *header, NDK_FN_CLOSE_COMPLETION done, PVOID context) {
    Object *o = FromHeader(header);
    if (!o || o->type() == NdkObjectTypeAdapter) return STATUS_INVALID_PARAMETER;
    return o->adapter()->Close(o, done, context);
}

}  // namespace opennd::ndk
