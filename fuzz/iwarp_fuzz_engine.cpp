// Fuzz driver, modes 2 and 3: the engine receiving a hostile stream, after
// an optional handshake. Oracles: memory is only placed inside a range that
// passed a check and only fetched inside a range checked for remote read;
// every FPDU the engine sends decodes; every posted operation completes
// exactly once (at the latest when the connection is torn down).
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <vector>

#include "iwarp/engine.h"
#include "iwarp/handshake.h"
#include "iwarp_fuzz_driver.h"

namespace iwarp_fuzz {

using namespace iwarp;

namespace {

struct Range {
    uint32_t stag;
    uint64_t to;
    uint64_t len;
    bool Covers(uint32_t s, uint64_t t, uint64_t l) const { return s == stag && t >= to && t - to + l <= len; }
};

// Small regions: 1 read/write, 2 read-only, 3 write-only, 4 read/write and
// invalidatable, 5 of another connection (not associated). Every call is
// checked against the engine's contract.
class BoundedPlacement : public Placement {
public:
    BoundedPlacement() {
        Add(1, 0x1000, true, true);
        Add(2, 0x2000, false, true);
        Add(3, 0x3000, true, false);
        Add(4, 0, true, true);
        Add(5, 0x5000, true, true);
    }
    TaggedCheck CheckTagged(uint32_t stag, uint64_t to, uint32_t len, Access access) override {
        IWARP_FUZZ_CHECK(len > 0 && to + len > to);  // the engine rules out empty and wrapping ranges
        auto it = regions_.find(stag);
        if (it == regions_.end() || !it->second.valid) return TaggedCheck::InvalidStag;
        const Region &r = it->second;
        if (stag == 5) return TaggedCheck::StagNotAssociated;
        if (to < r.base || to - r.base + len > r.memory.size()) return TaggedCheck::BaseBounds;
        const bool ok = access == Access::RemoteRead ? r.read : r.write;
        if (!ok) return TaggedCheck::AccessRights;
        if (access == Access::RemoteRead) {
            readable_.push_back({stag, to, len});
            if (readable_.size() > 64) readable_.pop_front();
        } else {
            last_write_check_ = {stag, to, len};
        }
        return TaggedCheck::Ok;
    }
    void PlaceTagged(uint32_t stag, uint64_t to, const uint8_t *data, uint32_t len, iwarp::Access) override {
        IWARP_FUZZ_CHECK(last_write_check_.Covers(stag, to, len));
        Region &r = regions_.at(stag);
        for (uint32_t i = 0; i < len; ++i) r.memory.at(to - r.base + i) = data[i];
    }
    size_t TaggedDestination(uint32_t stag, uint64_t to, uint32_t len, Access, MutableBuffer *out,
                             size_t max) override {
        IWARP_FUZZ_CHECK(last_write_check_.Covers(stag, to, len) && max > 0);
        Region &r = regions_.at(stag);
        out[0] = {r.memory.data() + (to - r.base), len};
        return 1;
    }
    bool FetchTagged(uint32_t stag, uint64_t to, uint8_t *out, uint32_t len) override {
        bool covered = false;
        for (const Range &c : readable_) covered = covered || c.Covers(stag, to, len);
        IWARP_FUZZ_CHECK(covered);
        const Region &r = regions_.at(stag);
        if (!r.valid) return false;
        for (uint32_t i = 0; i < len; ++i) out[i] = r.memory.at(to - r.base + i);
        return true;
    }
    bool InvalidateStag(uint32_t stag) override {
        auto it = regions_.find(stag);
        if (stag != 4 || it == regions_.end() || !it->second.valid) return false;
        it->second.valid = false;  // later Read Responses from it fail at fetch
        return true;
    }

private:
    struct Region {
        uint64_t base;
        std::vector<uint8_t> memory;
        bool write, read, valid = true;
    };
    void Add(uint32_t stag, uint64_t base, bool write, bool read) {
        regions_[stag] = Region{base, std::vector<uint8_t>(512, static_cast<uint8_t>(stag)), write, read};
    }
    std::map<uint32_t, Region> regions_;
    std::deque<Range> readable_;
    Range last_write_check_{0, 0, 0};
};

class Harness {
public:
    Harness(const Negotiated &n, Cursor &cfg) : placement_(), options_(Options(cfg)), engine_(n, placement_, options_) {
        budget_ = 64 + cfg.Byte() * 16;
        for (int i = 0; i < 3; ++i) PostReceive(cfg.Byte());
        const uint8_t ops = cfg.Byte();
        const ConstBuffer src{source_.data(), static_cast<size_t>(cfg.Byte()) * 3};
        if (ops & 1) Post(engine_.PostSend(next_id_, {&src, 1}, SendFlags{bool(ops & 2), bool(ops & 4), 4}));
        if (ops & 8) Post(engine_.PostWrite(next_id_, {&src, 1}, 1 + (ops >> 6), 0x1000));
        if (ops & 16) Post(engine_.PostRead(next_id_, 1, 0x1000 + cfg.Byte(), cfg.Byte(), 2, 0x2000));
        if (ops & 32) Post(engine_.PostRead(next_id_, 3, 0x3000, cfg.Byte(), 1, 0x1000 + cfg.Byte()));
    }

    void Run(Splitter &split, std::span<const uint8_t> s) {
        Transmit();  // posted Reads go out first, so Read Responses can match them
        size_t pos = 0;
        while (pos < s.size()) {
            const auto piece = s.subspan(pos, split.Next(s.size() - pos));
            MutableBuffer direct[2];
            if (const size_t n = engine_.DirectBuffers(direct, 2); n > 0) {  // as a socket read straight into place
                size_t k = 0;
                for (size_t i = 0; i < n && k < piece.size(); ++i) {
                    const size_t m = std::min(direct[i].length, piece.size() - k);
                    std::copy_n(piece.data() + k, m, direct[i].data);
                    k += m;
                }
                engine_.DirectPlaced(k);
                pos += k;
                continue;
            }
            const RxResult r = engine_.Receive(piece);
            IWARP_FUZZ_CHECK(r.consumed <= piece.size());
            pos += r.status == RxStatus::Ok ? piece.size() : r.consumed;
            IWARP_FUZZ_CHECK(r.status != RxStatus::Ok || r.consumed == piece.size());
            if (r.status == RxStatus::Stalled) {
                if (receives_posted_ < 8) {
                    PostReceive(static_cast<uint8_t>(pos));
                    engine_.Resume();
                } else {
                    engine_.Abort(true);
                }
            }
            Transmit();
            Drain();
        }
        Transmit();
        engine_.Abort(false);  // tear down: everything left completes now
        Transmit();
        Drain();
        IWARP_FUZZ_CHECK(open_.empty());
    }

private:
    static EngineOptions Options(Cursor &cfg) {
        const uint8_t b = cfg.Byte();
        EngineOptions o;
        o.mss = 64 + (b & 0x1f) * 32;
        o.stall_on_missing_receive = b & 0x20;
        o.strict = !(b & 0x40);
        o.max_receive_queue = 16;
        o.piece_min = b & 0x80 ? 1 : 0;  // Write, Read Response and Send payloads placed piece by piece
        return o;
    }
    void Post(bool ok) {
        if (ok) open_.insert(next_id_);
        ++next_id_;
    }
    void PostReceive(uint8_t size) {
        buffers_.emplace_back(size, 0);
        const MutableBuffer b{buffers_.back().data(), buffers_.back().size()};
        ++receives_posted_;
        Post(engine_.PostReceive(next_id_, {&b, 1}));
    }
    void Transmit() {
        std::vector<uint8_t> out;
        engine_.Pull(&out, budget_);
        FpduDecoder d(FpduOptions{engine_.negotiated().crc});
        for (size_t pos = 0; pos < out.size();) {
            size_t used = 0;
            IWARP_FUZZ_CHECK(d.Feed(std::span<const uint8_t>(out).subspan(pos), &used) == FpduDecoder::Status::Segment);
            IWARP_FUZZ_CHECK(used <= engine_.max_fpdu() || d.segment().opcode == Opcode::Terminate);
            pos += used;
        }
    }
    void Drain() {
        for (Completion c; engine_.PollCompletion(&c);) IWARP_FUZZ_CHECK(open_.erase(c.id) == 1);
    }

    BoundedPlacement placement_;
    EngineOptions options_;
    Engine engine_;
    std::vector<uint8_t> source_ = std::vector<uint8_t>(765, 0x5a);
    std::deque<std::vector<uint8_t>> buffers_;  // stable addresses
    std::set<uint64_t> open_;
    uint64_t next_id_ = 1;
    int receives_posted_ = 0;
    size_t budget_ = 0;
};

Negotiated NegotiatedFrom(uint8_t a, uint8_t b) {
    Negotiated n;
    n.role = a & 1 ? Role::Responder : Role::Initiator;
    n.crc = a & 2;
    n.rtr = static_cast<RtrType>((a >> 2) & 7);
    if (n.rtr != RtrType::Send && n.rtr != RtrType::Write && n.rtr != RtrType::Read) n.rtr = RtrType::None;
    n.hold_until_first_fpdu = a & 0x20;
    n.ird = b & 7;
    n.ord = (b >> 3) & 7;
    return n;
}

void Handshake(uint8_t flags, Splitter &split, Cursor &in) {
    MpaConfig c;
    const uint8_t a = in.Byte(), b = in.Byte();
    c.revision = a & 1 ? 1 : 2;
    c.enhanced = a & 2;
    c.crc = a & 4;
    c.peer_to_peer = a & 8;
    c.rtr_offer = (a >> 4) & 7;
    c.rtr_accept = b & 7;
    c.ird = (b >> 3) & 3;
    c.ord = (b >> 5) & 3;
    const std::vector<uint8_t> pd(in.Byte(), 0x11);
    const auto s = in.Rest();
    size_t pos = 0;
    HandshakeStatus st = HandshakeStatus::NeedMore;
    Negotiated n;
    if (flags & 4) {
        Responder r(c);
        while (st == HandshakeStatus::NeedMore && pos < s.size()) {
            size_t used = 0;
            st = r.Feed(s.subspan(pos, split.Next(s.size() - pos)), &used);
            pos += used;
        }
        if (st != HandshakeStatus::RequestReceived) return;
        const auto reply = (flags & 8) ? r.Reject(pd) : r.Accept(pd);
        if (r.status() != HandshakeStatus::Connected) return;
        IWARP_FUZZ_CHECK(!reply.empty());
        n = r.negotiated();
    } else {
        Initiator i(c, pd);
        while (st == HandshakeStatus::NeedMore && pos < s.size()) {
            size_t used = 0;
            st = i.Feed(s.subspan(pos, split.Next(s.size() - pos)), &used);
            pos += used;
        }
        if (st == HandshakeStatus::Failed) {
            const auto t = i.TakeOutput();
            if (!t.empty()) {
                FpduDecoder d(FpduOptions{i.reply().crc});
                size_t used = 0;
                IWARP_FUZZ_CHECK(d.Feed(t, &used) == FpduDecoder::Status::Segment && used == t.size());
            }
        }
        if (st != HandshakeStatus::Connected) return;
        n = i.negotiated();
    }
    Cursor rest(s.data() + pos, s.size() - pos);
    Harness h(n, rest);
    h.Run(split, rest.Rest());
}

}  // namespace

void RunEngineMode(uint8_t flags, Splitter &split, Cursor &in) {
    if ((flags & 3) == 3) return Handshake(flags, split, in);
    const uint8_t a = in.Byte(), b = in.Byte();
    Harness h(NegotiatedFrom(a, b), in);
    h.Run(split, in.Rest());
}

}  // namespace iwarp_fuzz
