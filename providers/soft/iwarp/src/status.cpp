// Error class names and their Terminate codes. The mapping follows the code
// tables of RFC 5040/5041/5044/6581; where the RFCs leave a choice it
// follows Linux siw (noted inline).
#include "iwarp/status.h"

namespace iwarp {

const char *ErrcName(Errc e) {
    switch (e) {
    case Errc::Ok: return "ok";
    case Errc::MpaBadKey: return "mpa-bad-key";
    case Errc::MpaBadRevision: return "mpa-bad-revision";
    case Errc::MpaPrivateDataTooLong: return "mpa-private-data-too-long";
    case Errc::MpaEnhancedTooShort: return "mpa-enhanced-too-short";
    case Errc::MpaMarkersRequested: return "mpa-markers-requested";
    case Errc::MpaUnexpectedData: return "mpa-unexpected-data";
    case Errc::MpaRejected: return "mpa-rejected";
    case Errc::MpaBadReplyFlags: return "mpa-bad-reply-flags";
    case Errc::MpaInsufficientIrd: return "mpa-insufficient-ird";
    case Errc::MpaNoMatchingRtr: return "mpa-no-matching-rtr";
    case Errc::FpduTooShort: return "fpdu-too-short";
    case Errc::FpduTooLong: return "fpdu-too-long";
    case Errc::FpduCrc: return "fpdu-crc";
    case Errc::DdpVersion: return "ddp-version";
    case Errc::DdpReserved: return "ddp-reserved";
    case Errc::RdmapVersion: return "rdmap-version";
    case Errc::RdmapReserved: return "rdmap-reserved";
    case Errc::RdmapOpcode: return "rdmap-opcode";
    case Errc::DdpQueueNumber: return "ddp-queue-number";
    case Errc::DdpMessageOffset: return "ddp-message-offset";
    case Errc::DdpMsnRange: return "ddp-msn-range";
    case Errc::DdpNoBuffer: return "ddp-no-buffer";
    case Errc::DdpMessageTooLong: return "ddp-message-too-long";
    case Errc::ReadRequestShape: return "read-request-shape";
    case Errc::TerminateShape: return "terminate-shape";
    case Errc::TaggedInvalidStag: return "tagged-invalid-stag";
    case Errc::TaggedBaseBounds: return "tagged-base-bounds";
    case Errc::TaggedAccessRights: return "tagged-access-rights";
    case Errc::TaggedStagNotAssociated: return "tagged-stag-not-associated";
    case Errc::TaggedToWrap: return "tagged-to-wrap";
    case Errc::UnexpectedReadResponse: return "unexpected-read-response";
    case Errc::CannotInvalidate: return "cannot-invalidate";
    case Errc::LocalFetchFailed: return "local-fetch-failed";
    case Errc::ReceiveBufferGone: return "receive-buffer-gone";
    case Errc::TerminateReceived: return "terminate-received";
    case Errc::LocalAbort: return "local-abort";
    }
    return "unknown";
}

namespace {
constexpr TerminateCode Llp(uint8_t code) {
    return {Layer::Llp, etype::kLlpMpa, code};
}
constexpr TerminateCode DdpTagged(uint8_t code) {
    return {Layer::Ddp, etype::kDdpTagged, code};
}
constexpr TerminateCode DdpUntagged(uint8_t code) {
    return {Layer::Ddp, etype::kDdpUntagged, code};
}
constexpr TerminateCode Protection(uint8_t code) {
    return {Layer::Rdmap, etype::kRdmapProtection, code};
}
constexpr TerminateCode Operation(uint8_t code) {
    return {Layer::Rdmap, etype::kRdmapOperation, code};
}
}  // namespace

TerminateCode TerminateCodeFor(Errc e, bool tagged, bool read_source) {
    switch (e) {
    case Errc::Ok: break;
    case Errc::MpaBadKey:
    case Errc::MpaBadRevision:
    case Errc::MpaPrivateDataTooLong:
    case Errc::MpaEnhancedTooShort:
    case Errc::MpaMarkersRequested:
    case Errc::MpaUnexpectedData:
    case Errc::MpaRejected:
    case Errc::MpaBadReplyFlags: return Llp(ecode::kLlpBadRequestReply);
    case Errc::MpaInsufficientIrd: return Llp(ecode::kLlpInsufficientIrd);
    case Errc::MpaNoMatchingRtr: return Llp(ecode::kLlpNoMatchingRtr);
    case Errc::FpduTooShort:
    case Errc::FpduTooLong: return Llp(ecode::kLlpFraming);
    case Errc::FpduCrc: return Llp(ecode::kLlpCrc);
    case Errc::DdpVersion: return tagged ? DdpTagged(ecode::kDdpTVersion) : DdpUntagged(ecode::kDdpUVersion);
    case Errc::DdpReserved: return {Layer::Ddp, etype::kDdpCatastrophic, 0};
    case Errc::RdmapVersion: return Operation(ecode::kRdmapVersion);
    case Errc::RdmapReserved: return Operation(ecode::kRdmapUnspecified);
    case Errc::RdmapOpcode: return Operation(ecode::kRdmapOpcode);
    case Errc::DdpQueueNumber: return DdpUntagged(ecode::kDdpUInvalidQn);
    case Errc::DdpMessageOffset: return DdpUntagged(ecode::kDdpUInvalidMo);
    case Errc::DdpMsnRange: return DdpUntagged(ecode::kDdpUMsnRange);
    case Errc::DdpNoBuffer: return DdpUntagged(ecode::kDdpUNoBuffer);
    case Errc::DdpMessageTooLong: return DdpUntagged(ecode::kDdpUTooLong);
    case Errc::ReadRequestShape: return Operation(ecode::kRdmapUnspecified);
    case Errc::TerminateShape: return Operation(ecode::kRdmapUnspecified);
    // Placement: a Read Request's source is checked by RDMAP (remote
    // protection error); Write and Read Response sinks by DDP (tagged buffer
    // error). DDP has no access-rights code, so that one is always RDMAP's.
    case Errc::TaggedInvalidStag:
        return read_source ? Protection(ecode::kRdmapInvalidStag) : DdpTagged(ecode::kDdpTInvalidStag);
    case Errc::TaggedBaseBounds:
        return read_source ? Protection(ecode::kRdmapBaseBounds) : DdpTagged(ecode::kDdpTBaseBounds);
    case Errc::TaggedAccessRights: return Protection(ecode::kRdmapAccessRights);
    case Errc::TaggedStagNotAssociated:
        return read_source ? Protection(ecode::kRdmapStagNotAssociated) : DdpTagged(ecode::kDdpTStagNotAssociated);
    case Errc::TaggedToWrap: return read_source ? Protection(ecode::kRdmapToWrap) : DdpTagged(ecode::kDdpTToWrap);
    case Errc::UnexpectedReadResponse: return Operation(ecode::kRdmapOpcode);
    case Errc::CannotInvalidate: return Protection(ecode::kRdmapCannotInvalidate);
    case Errc::LocalFetchFailed: return Protection(ecode::kRdmapInvalidStag);  // as siw for a source gone at transmit
    case Errc::ReceiveBufferGone:  // a local protection error at the data sink
    case Errc::TerminateReceived:
    case Errc::LocalAbort: return {Layer::Rdmap, etype::kRdmapCatastrophic, ecode::kRdmapUnspecified};
    }
    return {Layer::Rdmap, etype::kRdmapCatastrophic, ecode::kRdmapUnspecified};
}

}  // namespace iwarp
