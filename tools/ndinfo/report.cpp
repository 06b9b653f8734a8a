#include "report.h"

#include <cstdio>

namespace {

// Each ND2_ADAPTER_INFO field once, for both outputs.
#define ADAPTER_FIELDS(X)                                                                            \
    X(InfoVersion) X(VendorId) X(DeviceId) X(AdapterId) X(MaxRegistrationSize) X(MaxWindowSize)      \
    X(MaxInitiatorSge) X(MaxReceiveSge) X(MaxReadSge) X(MaxTransferLength) X(MaxInlineDataSize)      \
    X(MaxInboundReadLimit) X(MaxOutboundReadLimit) X(MaxReceiveQueueDepth) X(MaxInitiatorQueueDepth) \
    X(MaxSharedReceiveQueueDepth) X(MaxCompletionQueueDepth) X(InlineRequestThreshold)               \
    X(LargeRequestThreshold) X(MaxCallerData) X(MaxCalleeData) X(AdapterFlags)

std::string Json(const std::string &s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string Flags(ULONG f) {
    std::string s;
    auto add = [&](ULONG bit, const char *name) {
        if (f & bit) s += (s.empty() ? "" : "|") + std::string(name);
    };
    add(ND_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED, "IN_ORDER_DMA");
    add(ND_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED, "CQ_INTERRUPT_MODERATION");
    add(ND_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED, "MULTI_ENGINE");
    add(ND_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, "CQ_RESIZE");
    add(ND_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, "LOOPBACK_CONNECTIONS");
    return s.empty() ? "none" : s;
}

}  // namespace

std::string StatusText(HRESULT hr) {
    char buf[32];
    std::string s = OpenNdStatusText(hr, buf, sizeof buf);
    const char *meaning = OpenNdStatusMeaning(hr);
    if (meaning && *meaning) s += std::string(" (") + meaning + ")";
    return s;
}

void PrintText(const Report &r) {
    std::printf("Catalog: %s\n", r.catalog.c_str());
    for (const auto &p : r.problems) std::printf("  skipped file: %s\n", p.c_str());
    if (r.providers.empty()) std::printf("No providers installed (install one with ndinstall -i).\n");
    for (const auto &p : r.providers) {
        std::printf("\nProvider %s %s\n", p.name.c_str(), p.guid.c_str());
        if (!p.description.empty()) std::printf("  %s\n", p.description.c_str());
        std::printf("  library: %s\n  catalog entry: %s\n  version: 0x%X\n", p.library.c_str(), p.file.c_str(),
                    static_cast<unsigned>(p.version));
        if (!p.usable) {
            std::printf("  NOT USABLE: %s\n", p.failure.c_str());
            continue;
        }
        if (p.adapters.empty()) std::printf("  serves no addresses\n");
        for (const auto &a : p.adapters) {
            std::printf("  Adapter 0x%llx:", static_cast<unsigned long long>(a.id));
            for (const auto &addr : a.addresses) std::printf(" %s", addr.c_str());
            std::printf("\n");
            if (FAILED(a.open_status)) {
                std::printf("    OpenAdapter failed: %s\n", StatusText(a.open_status).c_str());
                continue;
            }
            if (FAILED(a.query_status)) {
                std::printf("    Query failed: %s\n", StatusText(a.query_status).c_str());
                continue;
            }
            if (!a.notes.empty()) {
                std::string line;
                for (char c : a.notes + "\n") {
                    if (c != '\n') {
                        line += c;
                        continue;
                    }
                    std::printf("    note: %s\n", line.c_str());
                    line.clear();
                }
            }
#define PRINT_FIELD(f) std::printf("    %-28s %llu\n", #f, static_cast<unsigned long long>(a.info.f));
            ADAPTER_FIELDS(PRINT_FIELD)
#undef PRINT_FIELD
            std::printf("    %-28s %s\n", "(flags)", Flags(a.info.AdapterFlags).c_str());
        }
    }
}

void PrintJson(const Report &r) {
    std::printf("{\"catalog\":%s,\"problems\":[", Json(r.catalog).c_str());
    for (size_t i = 0; i < r.problems.size(); ++i) std::printf("%s%s", i ? "," : "", Json(r.problems[i]).c_str());
    std::printf("],\"providers\":[");
    for (size_t i = 0; i < r.providers.size(); ++i) {
        const auto &p = r.providers[i];
        std::printf("%s{\"name\":%s,\"guid\":%s,\"library\":%s,\"file\":%s,\"description\":%s,\"version\":%d,"
                    "\"usable\":%s,\"failure\":%s,\"adapters\":[",
                    i ? "," : "", Json(p.name).c_str(), Json(p.guid).c_str(), Json(p.library).c_str(),
                    Json(p.file).c_str(), Json(p.description).c_str(), p.version, p.usable ? "true" : "false",
                    Json(p.failure).c_str());
        for (size_t j = 0; j < p.adapters.size(); ++j) {
            const auto &a = p.adapters[j];
            std::printf("%s{\"id\":%llu,\"addresses\":[", j ? "," : "", static_cast<unsigned long long>(a.id));
            for (size_t k = 0; k < a.addresses.size(); ++k)
                std::printf("%s%s", k ? "," : "", Json(a.addresses[k]).c_str());
            std::printf("],\"open_status\":%s,\"query_status\":%s,\"notes\":%s", Json(StatusText(a.open_status)).c_str(),
                        Json(StatusText(a.query_status)).c_str(), Json(a.notes).c_str());
            if (SUCCEEDED(a.open_status) && SUCCEEDED(a.query_status)) {
                std::printf(",\"info\":{");
                const char *sep = "";
#define JSON_FIELD(f)                                                                              \
    std::printf("%s\"%s\":%llu", sep, #f, static_cast<unsigned long long>(a.info.f));            \
    sep = ",";
                ADAPTER_FIELDS(JSON_FIELD)
#undef JSON_FIELD
                std::printf(",\"AdapterFlagNames\":%s}", Json(Flags(a.info.AdapterFlags)).c_str());
            }
            std::printf("}");
        }
        std::printf("]}");
    }
    std::printf("]}\n");
}
