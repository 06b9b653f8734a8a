// NdkQueryExtension and OpenND's one NDK extension interface: the ND2
// object under an NDK object (opennd/ndk_extensions.h).
#include <cstring>

#include "adapter.h"
#include "object.h"
#include "objects.h"
#include "opennd/ndk_extensions.h"

namespace opennd::ndk {
namespace {

constexpr GUID kNd2InterfaceId = OPENND_NDK_ND2_INTERFACE_ID;

// The ND2 object `o` stands over; null for a PD (ND2 has none).
IUnknown *Nd2Of(Object *o) {
    switch (o->type()) {
    case NdkObjectTypeAdapter: return static_cast<Adapter *>(o)->nd();
    case NdkObjectTypeQp: return static_cast<Qp *>(o)->nd();
    case NdkObjectTypeCq: return static_cast<Cq *>(o)->nd();
    case NdkObjectTypeMr: {
        auto *mr = static_cast<Mr *>(o);
        return mr->fast() ? static_cast<IUnknown *>(mr->fast()) : mr->nd();
    }
    case NdkObjectTypeMw: return static_cast<Mw *>(o)->nd();
    case NdkObjectTypeSrq: return static_cast<Srq *>(o)->nd();
    case NdkObjectTypeConnector: return static_cast<Connector *>(o)->nd();
    case NdkObjectTypeListener: return static_cast<Listener *>(o)->nd();
    case NdkObjectTypeSharedEndpoint: return static_cast<SharedEndpoint *>(o)->nd();
    default: return nullptr;
    }
}

NTSTATUS GetNd2Interface(NDK_OBJECT_HEADER *header, const GUID *iid, VOID **out) {
    if (out) *out = nullptr;
    Object *o = FromHeader(header);
    if (!o || !iid || !out) return STATUS_INVALID_PARAMETER;
    IUnknown *nd = Nd2Of(o);
    if (!nd) return STATUS_NOT_SUPPORTED;
    return StatusFromNd(nd->QueryInterface(*iid, out));
}

const OPENND_NDK_ND2_DISPATCH kNd2Dispatch = {GetNd2Interface};

}  // namespace

NTSTATUS QueryExtension(NDK_OBJECT_HEADER *header, GUID *id, NDK_VERSION version, NDK_EXTENSION_INTERFACE *out) {
    if (out) out->Dispatch = nullptr;
    Object *o = FromHeader(header);
    if (!o || !id || !out) return STATUS_INVALID_PARAMETER;
    // Version 1.0 is the only one; a consumer built for a later one gets
    // nothing rather than a table shorter than it expects.
    if (std::memcmp(id, &kNd2InterfaceId, sizeof(GUID)) != 0 ||
        version.Major != OPENND_NDK_ND2_INTERFACE_VERSION_MAJOR ||
        version.Minor > OPENND_NDK_ND2_INTERFACE_VERSION_MINOR || !Nd2Of(o))
        return STATUS_NOT_SUPPORTED;
    out->Dispatch = &kNd2Dispatch;
    return STATUS_SUCCESS;
}

}  // namespace opennd::ndk
