// Shared-memory baselines: the bare cache-line ping-pong (the floor for any
// polling transport), a message ping-pong through a shared mapping, and
// streaming copy bandwidth through a ring of slots. The mapping is made
// before fork (MAP_SHARED|MAP_ANONYMOUS); the parent measures.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "baselines.h"
#include "process.h"

namespace opennd::bench {

namespace {

constexpr uint64_t kStop = ~0ull;
constexpr std::size_t kPage = 4096;

std::size_t RoundUp(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

struct PingPongCtl {
    Line ping;  // written by the parent: sequence number, or kStop
    Line pong;  // written by the child: the sequence number it answers
};

// Child side of both ping-pongs: wait for ping == expected (or kStop), run
// answer(seq), then publish pong = seq.
template <class Answer>
void AnswerPings(PingPongCtl *ctl, const ChildSide &side, Answer &&answer) {
    for (uint64_t expect = 1;; ++expect) {
        Spinner spin(side.deadline());
        uint64_t v;
        while ((v = ctl->ping.v.load(std::memory_order_acquire)) != expect && v != kStop)
            if (!spin.Pause()) throw std::runtime_error("no ping from the parent before the child's guard expired");
        if (v == kStop) return;
        answer(v);
        ctl->pong.v.store(v, std::memory_order_release);
    }
}

void Ping(PingPongCtl *ctl, uint64_t seq, const Deadline &hard) {
    ctl->ping.v.store(seq, std::memory_order_release);
    if (!WaitEqual(ctl->pong, seq, hard)) throw std::runtime_error("the child stopped answering (reply guard expired)");
}

}  // namespace

bool WaitEqual(const Line &line, uint64_t want, const Deadline &d) {
    Spinner spin(d);
    while (line.v.load(std::memory_order_acquire) != want)
        if (!spin.Pause()) return false;
    return true;
}

void Stamp(char *msg, uint64_t size, uint64_t seq) { std::memcpy(msg, &seq, std::min<uint64_t>(size, 8)); }

void CheckStamp(const char *msg, uint64_t size, uint64_t seq, const char *where) {
    uint64_t got = 0, want = 0;
    std::memcpy(&got, msg, std::min<uint64_t>(size, 8));
    std::memcpy(&want, &seq, std::min<uint64_t>(size, 8));
    if (got != want)
        throw std::runtime_error(std::string("data check failed in ") + where + ": message " + std::to_string(seq) +
                                 " arrived with the wrong contents");
}

Result CachelinePingPong(const Options &o, uint64_t) {
    Mapping shared(kPage, true);
    auto *ctl = new (shared.data()) PingPongCtl;
    Child child([&](ChildSide &side) { AnswerPings(ctl, side, [](uint64_t) {}); }, ChildGuardSeconds(o));

    Deadline hard(ReplyGuardSeconds(o));
    uint64_t seq = 0;
    Measurement m = Measure(LatencyConfig(o), [&](uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) Ping(ctl, ++seq, hard);
    });
    ctl->ping.v.store(kStop, std::memory_order_release);
    child.Finish(2);

    Result r("cacheline-pingpong", "shm", "half round trip of an 8 B flag", 8);
    SetLatencySamples(r, m, 0.5);
    return r;
}

Result ShmPingPong(const Options &o, uint64_t size) {
    std::size_t buf = RoundUp(size, kPage);
    Mapping shared(kPage + 2 * buf, true);
    auto *ctl = new (shared.data()) PingPongCtl;
    char *to_child = shared.data() + kPage, *to_parent = to_child + buf;
    Mapping src(buf, false), dst(buf, false);  // private, one pair per process after fork

    Child child(
        [&](ChildSide &side) {
            AnswerPings(ctl, side, [&](uint64_t seq) {
                std::memcpy(dst.data(), to_child, size);  // receive
                CheckStamp(dst.data(), size, seq, "the child");
                std::memcpy(to_parent, dst.data(), size);  // send it back
            });
        },
        ChildGuardSeconds(o));

    Deadline hard(ReplyGuardSeconds(o));
    uint64_t seq = 0;
    Measurement m = Measure(LatencyConfig(o), [&](uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
            Stamp(src.data(), size, ++seq);
            std::memcpy(to_child, src.data(), size);
            Ping(ctl, seq, hard);
            std::memcpy(dst.data(), to_parent, size);
            CheckStamp(dst.data(), size, seq, "the parent");
        }
        Touch(dst.data());
    });
    ctl->ping.v.store(kStop, std::memory_order_release);
    child.Finish(2);

    Result r("shm-pingpong", "shm", "half round trip: copy in, flag, copy out", size);
    SetLatencySamples(r, m, 0.5);
    return r;
}

namespace {

struct CopyCtl {
    Line tail;  // chunks the consumer has finished with
    Line stop;  // 1: consumer exits
};

struct Ring {
    static constexpr std::size_t kMaxSlot = 256 * 1024;
    static constexpr std::size_t kRingBytes = 4 * 1024 * 1024;
    std::size_t slot, stride, slots, chunks;  // chunks per message
    explicit Ring(uint64_t size)
        : slot(std::min<std::size_t>(size, kMaxSlot)),
          stride(RoundUp(sizeof(Line) + slot, 64)),
          slots(std::clamp<std::size_t>(kRingBytes / slot, 8, 256)),
          chunks((size + slot - 1) / slot) {}
    std::size_t Bytes() const { return kPage + slots * stride; }
    Line *Seq(char *base, uint64_t k) const { return reinterpret_cast<Line *>(base + kPage + (k % slots) * stride); }
    char *Data(char *base, uint64_t k) const { return base + kPage + (k % slots) * stride + sizeof(Line); }
};

}  // namespace

Result ShmCopyBandwidth(const Options &o, uint64_t size) {
    Ring ring(size);
    Mapping shared(ring.Bytes(), true);
    char *base = shared.data();
    auto *ctl = new (base) CopyCtl;
    for (std::size_t i = 0; i < ring.slots; ++i) new (ring.Seq(base, i)) Line;
    Mapping src(RoundUp(size, kPage), false), dst(RoundUp(size, kPage), false);

    // Consumer: wait for chunk k, copy it out of the ring, release the slot.
    Child child(
        [&](ChildSide &side) {
            for (uint64_t k = 0;; ++k) {
                Spinner spin(side.deadline());
                while (ring.Seq(base, k)->v.load(std::memory_order_acquire) != k + 1) {
                    if (ctl->stop.v.load(std::memory_order_acquire)) return;
                    if (!spin.Pause()) throw std::runtime_error("no data from the parent before the child's guard expired");
                }
                uint64_t c = k % ring.chunks, off = c * ring.slot, len = std::min<uint64_t>(ring.slot, size - off);
                std::memcpy(dst.data() + off, ring.Data(base, k), len);
                if (c == 0) CheckStamp(dst.data(), len, k / ring.chunks + 1, "the consumer");
                ctl->tail.v.store(k + 1, std::memory_order_release);
            }
        },
        ChildGuardSeconds(o));

    Deadline hard(ReplyGuardSeconds(o));
    uint64_t k = 0, msg = 0;
    auto fail = [] { throw std::runtime_error("the consumer stopped (reply guard expired)"); };
    Measurement m = Measure(BandwidthConfig(o, size), [&](uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
            Stamp(src.data(), size, ++msg);
            for (uint64_t c = 0; c < ring.chunks; ++c, ++k) {
                if (k >= ring.slots) {  // wait for a free slot
                    Spinner spin(hard);
                    while (ctl->tail.v.load(std::memory_order_acquire) + ring.slots <= k)
                        if (!spin.Pause()) fail();
                }
                uint64_t off = c * ring.slot, len = std::min<uint64_t>(ring.slot, size - off);
                std::memcpy(ring.Data(base, k), src.data() + off, len);
                ring.Seq(base, k)->v.store(k + 1, std::memory_order_release);
            }
        }
        if (!WaitEqual(ctl->tail, k, hard)) fail();  // the sample ends when the consumer has it all
    });
    ctl->stop.v.store(1, std::memory_order_release);
    child.Finish(2);

    Result r("shm-copy-bw", "shm", "memcpy into a ring, other process copies out", size);
    SetBandwidthSamples(r, m, static_cast<double>(size));
    r.note = "ring of " + std::to_string(ring.slots) + " slots of " + FormatSize(ring.slot);
    return r;
}

}  // namespace opennd::bench
