// EngineOptions::confirm_by_read: Sends and Writes complete only when a later
// Read Response shows the peer took them, and a Terminate fails the very
// operation it names.
#include <gtest/gtest.h>

#include "iwarp_test_util.h"

namespace {
using namespace iwarp;
using namespace iwarp_test;

size_t ReadRequestsIn(const Bytes &wire) {
    std::vector<Bytes> storage;
    size_t reads = 0;
    for (const Segment &s : Segments(wire, false, &storage)) reads += s.opcode == Opcode::ReadRequest;
    return reads;
}

EngineOptions Confirming() {
    EngineOptions o;
    o.confirm_by_read = true;
    return o;
}

TEST(EngineConfirm, WriteCompletesOnlyAfterTheFenceReadReturns) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    p.pb.Add(7, 0x1000, 64, true, false);
    Bytes src = Pattern(64);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostWrite(1, std::span(&b, 1), 7, 0x1000));
    Bytes out;
    p.a.Pull(&out, 1 << 20);
    Completion c;
    EXPECT_FALSE(p.a.PollCompletion(&c)) << "a Write is not done when it leaves";
    EXPECT_EQ(p.a.unconfirmed(), 1u);
    EXPECT_EQ(p.a.outstanding_reads(), 1u) << "a zero-length fence Read follows the Write";
    ASSERT_EQ(p.b.Receive(out).status, RxStatus::Ok);
    p.Pump();
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].id, 1u);
    EXPECT_EQ(done[0].status, OpStatus::Success);
    EXPECT_EQ(done[0].length, 64u);
    EXPECT_EQ(p.pb.regions[7].memory, src);
}

TEST(EngineConfirm, AnApplicationReadConfirmsEarlierWritesWithoutAFence) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    p.pb.Add(7, 0, 64, true, true);
    p.pa.Add(9, 0, 64, false, false);
    Bytes src = Pattern(64);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostWrite(1, std::span(&b, 1), 7, 0));
    ASSERT_TRUE(p.a.PostWrite(2, std::span(&b, 1), 7, 0));
    ASSERT_TRUE(p.a.PostRead(3, 9, 0, 64, 7, 0));
    p.Pump();
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 3u);
    for (uint64_t i = 0; i < 3; ++i) {
        EXPECT_EQ(done[i].id, i + 1) << "posting order";
        EXPECT_EQ(done[i].status, OpStatus::Success);
    }
    EXPECT_EQ(ReadRequestsIn(p.a_wire), 1u) << "the application's Read confirms; no fence needed";
}

TEST(EngineConfirm, TerminateFailsTheWriteItNamesAndSettlesTheOthers) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    p.pb.Add(7, 0, 64, true, false);
    Bytes src = Pattern(64);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostWrite(1, std::span(&b, 1), 7, 0));    // fine
    ASSERT_TRUE(p.a.PostWrite(2, std::span(&b, 1), 8, 0));    // no such STag
    ASSERT_TRUE(p.a.PostWrite(3, std::span(&b, 1), 7, 0));    // sent after the bad one
    p.Pump();
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 3u);
    EXPECT_EQ(done[0].status, OpStatus::Success) << "the peer placed it before the bad one";
    EXPECT_EQ(done[1].status, OpStatus::RemoteAccessError);
    EXPECT_EQ(done[2].status, OpStatus::Flushed);
    EXPECT_TRUE(p.a.failed());
    EXPECT_TRUE(p.b.failed());
}

TEST(EngineConfirm, SendWithNoReceiveFailsWithRemoteNoReceiveWhenThePeerGivesUp) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    Bytes src = Pattern(16);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostSend(1, std::span(&b, 1)));
    Bytes out;
    p.a.Pull(&out, 1 << 20);
    auto r = p.b.Receive(out);
    ASSERT_EQ(r.status, RxStatus::Stalled);
    Completion c;
    EXPECT_FALSE(p.a.PollCompletion(&c)) << "not confirmed while the peer holds it";
    p.b.FailStalled();  // the receiver's timeout
    Bytes term;
    p.b.Pull(&term, 1 << 20);
    ASSERT_FALSE(term.empty());
    p.a.Receive(term);
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].status, OpStatus::RemoteNoReceive);
}

TEST(EngineConfirm, WithoutOrdOperationsCompleteWhenTheyLeave) {
    Pair p(Plain(Role::Initiator, false, 8, 0), Plain(Role::Responder, false, 0, 8), Confirming());
    p.pb.Add(7, 0, 64, true, false);
    Bytes src = Pattern(64);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostWrite(1, std::span(&b, 1), 7, 0));
    Bytes out;
    p.a.Pull(&out, 1 << 20);
    Completion c;
    ASSERT_TRUE(p.a.PollCompletion(&c));
    EXPECT_EQ(c.status, OpStatus::Success);
    EXPECT_EQ(p.a.outstanding_reads(), 0u);
}

TEST(EngineConfirm, AbortFlushesUnconfirmedOperationsExactlyOnce) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    p.pb.Add(7, 0, 64, true, false);
    Bytes src = Pattern(64);
    ConstBuffer b{src.data(), src.size()};
    for (uint64_t i = 1; i <= 4; ++i) ASSERT_TRUE(p.a.PostWrite(i, std::span(&b, 1), 7, 0));
    Bytes out;
    p.a.Pull(&out, 1 << 20);
    p.a.Abort(false);
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 4u);
    for (const Completion &c : done) EXPECT_EQ(c.status, OpStatus::Flushed);
    Completion extra;
    EXPECT_FALSE(p.a.PollCompletion(&extra));
}

// The peer closed in order once its transport had all our bytes (the
// provider checks both): what waited only for a confirming Read was taken
// and completes Success; our own Read still unanswered, and what was posted
// after it, are flushed by the Abort that follows, in posting order.
TEST(EngineConfirm, ConfirmTakenSucceedsUpToTheFirstUnansweredRead) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    p.pa.Add(9, 0, 64, false, false);
    Bytes src = Pattern(64);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostSend(1, std::span(&b, 1)));
    ASSERT_TRUE(p.a.PostWrite(2, std::span(&b, 1), 7, 0));
    ASSERT_TRUE(p.a.PostRead(3, 9, 0, 64, 7, 0));
    ASSERT_TRUE(p.a.PostSend(4, std::span(&b, 1)));
    Bytes out;
    p.a.Pull(&out, 1 << 20);  // all on the wire; no answer ever comes
    EXPECT_EQ(p.a.unconfirmed(), 3u);
    p.a.ConfirmTaken();
    p.a.Abort(false);
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 4u);
    for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(done[i].id, i + 1) << "posting order";
    EXPECT_EQ(done[0].status, OpStatus::Success);
    EXPECT_EQ(done[0].length, 64u);
    EXPECT_EQ(done[1].status, OpStatus::Success);
    EXPECT_EQ(done[2].status, OpStatus::Flushed) << "a Read needs its answer";
    EXPECT_EQ(done[3].status, OpStatus::Flushed) << "nothing completes out of order after a flushed Read";
}

// The fence Read that would confirm a Send waits while our Reads fill ORD;
// a Terminate then ends everything. The fence is the engine's own: no
// completion for it (seen: ndconformance across providers crashed here,
// siw terminating on a Send with no receive, the fence taken for a slot).
TEST(EngineConfirm, ATerminateWhileAFenceWaitsForItsTurnCompletesEachRequestOnce) {
    Pair p(Plain(Role::Initiator, false, 8, 1), Plain(Role::Responder, false, 1, 8), Confirming());
    p.pa.Add(9, 0, 64, false, false);
    p.pb.Add(7, 0, 64, true, true);
    Bytes src = Pattern(16);
    ConstBuffer b{src.data(), src.size()};
    for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(p.a.PostWrite(100 + i, std::span(&b, 1), 7, 0));
    p.Pump();  // done and confirmed: the slots start past 0
    ASSERT_EQ(p.Drain(p.a).size(), 3u);
    ASSERT_TRUE(p.a.PostRead(1, 9, 0, 64, 7, 0));
    ASSERT_TRUE(p.a.PostSend(2, std::span(&b, 1)));
    Bytes out;
    p.a.Pull(&out, 1 << 20);
    ASSERT_EQ(p.a.outstanding_reads(), 1u) << "ORD 1: the Read is out, the fence waits";
    ASSERT_EQ(p.a.unconfirmed(), 1u);
    p.b.Abort(true);
    Bytes term;
    p.b.Pull(&term, 1 << 20);
    ASSERT_FALSE(term.empty());
    p.a.Receive(term);
    EXPECT_TRUE(p.a.failed());
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].id, 1u);
    EXPECT_EQ(done[1].id, 2u);
    for (const Completion &c : done) EXPECT_NE(c.status, OpStatus::Success);
}

TEST(EngineConfirm, ConfirmTakenAfterAFailureChangesNothing) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    Bytes src = Pattern(16);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostSend(1, std::span(&b, 1)));
    Bytes out;
    p.a.Pull(&out, 1 << 20);
    p.a.Abort(false);
    p.a.ConfirmTaken();
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].status, OpStatus::Flushed);
}

}  // namespace

namespace {
using namespace iwarp;
using namespace iwarp_test;

TEST(EngineConfirm, ReadOfARefusedSourceFailsWithAnAccessErrorAfterConfirmedSends) {
    EngineOptions o;
    o.confirm_by_read = true;
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), o);
    p.pa.Add(9, 0, 64, false, false);
    Bytes buf(64);
    MutableBuffer rb{buf.data(), buf.size()};
    ASSERT_TRUE(p.b.PostReceive(50, std::span(&rb, 1)));
    Bytes src = Pattern(16);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostSend(1, std::span(&b, 1)));
    p.Pump();
    ASSERT_TRUE(p.a.PostRead(2, 9, 0, 64, 77, 0));  // no STag 77 at the target
    p.Pump();
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].status, OpStatus::Success);
    EXPECT_EQ(done[1].id, 2u);
    EXPECT_EQ(done[1].status, OpStatus::RemoteAccessError);
}

}  // namespace

namespace {
TEST(EngineConfirm, FirstReadOfARefusedSourceFailsWithAnAccessError) {
    iwarp::EngineOptions o;
    o.confirm_by_read = true;
    iwarp_test::Pair p(iwarp_test::Plain(iwarp::Role::Initiator), iwarp_test::Plain(iwarp::Role::Responder), o);
    p.pa.Add(9, 0, 64, false, false);
    ASSERT_TRUE(p.a.PostRead(2, 9, 0, 64, 0, 0x1000));  // STag 0: nothing there
    p.Pump();
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].status, iwarp::OpStatus::RemoteAccessError);
}
}  // namespace

namespace {
// Linux 6.1 siw may answer a zero-length Read with stale bytes: a fence's
// answer confirms all the same, and nothing is placed.
TEST(EngineConfirm, FenceAnswerCarryingStrayBytesStillConfirms) {
    iwarp::EngineOptions o;
    o.confirm_by_read = true;
    iwarp_test::Pair p(iwarp_test::Plain(iwarp::Role::Initiator), iwarp_test::Plain(iwarp::Role::Responder), o);
    p.pb.Add(7, 0, 64, true, false);
    iwarp_test::Bytes src = iwarp_test::Pattern(64);
    iwarp::ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostWrite(1, std::span(&b, 1), 7, 0));
    iwarp_test::Bytes out;
    p.a.Pull(&out, 1 << 20);  // the Write and the fence Read (sink STag 0)
    ASSERT_EQ(p.a.outstanding_reads(), 1u);
    // A Read Response to sink STag 0 carrying 16 bytes, as siw sends it.
    iwarp_test::Bytes reply;
    const size_t fpdu = iwarp::BeginFpdu(&reply, sizeof(iwarp::TaggedHeader) + 16);
    iwarp::AppendTaggedHeader(&reply, iwarp::Opcode::ReadResponse, true, 0, 0);
    reply.resize(reply.size() + 16, 0x5a);
    iwarp::FinishFpdu(&reply, fpdu, false);
    ASSERT_EQ(p.a.Receive(reply).status, iwarp::RxStatus::Ok);
    EXPECT_FALSE(p.a.failed());
    iwarp::Completion c;
    ASSERT_TRUE(p.a.PollCompletion(&c));
    EXPECT_EQ(c.status, iwarp::OpStatus::Success);
    EXPECT_EQ(p.pa.Count('P'), 0u) << "nothing placed for a zero-length Read";
}
}  // namespace

namespace {
using namespace iwarp;
using namespace iwarp_test;

// With CRC on, siw's stray bytes in answer to a zero-length Read may fail
// the CRC (they come from a buffer the application is already reusing):
// such an answer still only confirms. A bad CRC anywhere else ends the
// stream, and a real Read's data with a bad CRC is never placed.
struct CrcPair {
    Pair p{Plain(Role::Initiator, true), Plain(Role::Responder, true), [] {
               EngineOptions o;
               o.confirm_by_read = true;
               return o;
           }()};
    Bytes src = Pattern(64);

    // A Write (fenced by a zero-length Read) and, if `read`, a 16-byte Read.
    void Post(bool read) {
        p.pb.Add(7, 0, 64, true, true);
        p.pa.Add(9, 0x2000, 16, true, true);
        ConstBuffer b{src.data(), src.size()};
        ASSERT_TRUE(p.a.PostWrite(1, std::span(&b, 1), 7, 0));
        if (read) {
            ASSERT_TRUE(p.a.PostRead(2, 9, 0x2000, 16, 7, 0));
        }
        Bytes out;
        p.a.Pull(&out, 1 << 20);
    }
    // A Read Response to (stag, to) with 16 bytes of 0x5a and a CRC off by one.
    static Bytes BadCrcResponse(uint32_t stag, uint64_t to) {
        Bytes reply;
        const size_t fpdu = BeginFpdu(&reply, sizeof(TaggedHeader) + 16);
        AppendTaggedHeader(&reply, Opcode::ReadResponse, true, stag, to);
        reply.resize(reply.size() + 16, 0x5a);
        FinishFpdu(&reply, fpdu, true);
        reply.back() ^= 1;
        return reply;
    }
};

TEST(EngineConfirm, FenceAnswerWithABadCrcStillConfirms) {
    CrcPair t;
    t.Post(false);
    ASSERT_EQ(t.p.a.outstanding_reads(), 1u);
    ASSERT_EQ(t.p.a.Receive(CrcPair::BadCrcResponse(0, 0x7ab80b9114f3)).status, RxStatus::Ok);
    EXPECT_FALSE(t.p.a.failed());
    EXPECT_EQ(t.p.a.dropped_bad_crc(), 1u);
    Completion c;
    ASSERT_TRUE(t.p.a.PollCompletion(&c));
    EXPECT_EQ(c.status, OpStatus::Success);
    EXPECT_EQ(t.p.pa.Count('P'), 0u);
}

TEST(EngineConfirm, AFenceAnswerWithABadCrcMustNameTheFencesSink) {
    CrcPair t;
    t.Post(false);
    ASSERT_EQ(t.p.a.outstanding_reads(), 1u);  // the fence: sink STag 0
    EXPECT_EQ(t.p.a.Receive(CrcPair::BadCrcResponse(5, 0)).status, RxStatus::Failed);
    EXPECT_EQ(t.p.a.local_fault().errc, Errc::FpduCrc) << "reported as the CRC error it is";
    EXPECT_EQ(t.p.a.local_fault().header_length, sizeof(TaggedHeader)) << "its header kept for the log";
    EXPECT_FALSE(t.p.a.local_fault().has_ddp_header) << "an LLP Terminate carries none";
    EXPECT_EQ(t.p.a.dropped_bad_crc(), 0u);
}

TEST(EngineConfirm, ReadDataWithABadCrcEndsTheStreamUnplaced) {
    CrcPair t;
    t.Post(true);
    ASSERT_EQ(t.p.a.outstanding_reads(), 1u);  // the Read (it confirms the Write: no fence)
    EXPECT_EQ(t.p.a.Receive(CrcPair::BadCrcResponse(9, 0x2000)).status, RxStatus::Failed);
    EXPECT_EQ(t.p.a.local_fault().errc, Errc::FpduCrc);
    EXPECT_EQ(t.p.a.dropped_bad_crc(), 0u);
    EXPECT_EQ(t.p.pa.Count('P'), 0u) << "nothing placed from an FPDU whose CRC failed";
    EXPECT_EQ(t.p.pa.regions[9].memory, Bytes(16, 0));
}

TEST(EngineConfirm, ABadCrcOnAnythingButAReadResponseEndsTheStream) {
    CrcPair t;
    t.Post(false);
    Bytes write;  // a Write to our region 9 with a bad CRC
    const size_t f = BeginFpdu(&write, sizeof(TaggedHeader) + 16);
    AppendTaggedHeader(&write, Opcode::RdmaWrite, true, 9, 0x2000);
    write.resize(write.size() + 16, 0x5a);
    FinishFpdu(&write, f, true);
    write.back() ^= 1;
    EXPECT_EQ(t.p.a.Receive(write).status, RxStatus::Failed);
    EXPECT_EQ(t.p.a.local_fault().errc, Errc::FpduCrc);
    EXPECT_EQ(t.p.pa.regions[9].memory, Bytes(16, 0));
}
}  // namespace

namespace {
using namespace iwarp;
using namespace iwarp_test;

// SILENT_SUCCESS operations: no fence of their own; the next operation
// that wants its completion brings one that confirms them all, in order.
TEST(EngineConfirm, LazyOperationsWaitForAFenceSomebodyNeeds) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    p.pb.Add(7, 0, 64, true, false);
    Bytes src = Pattern(64);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostWrite(1, std::span(&b, 1), 7, 0, true));
    ASSERT_TRUE(p.a.PostWrite(2, std::span(&b, 1), 7, 0, true));
    p.Pump();
    EXPECT_EQ(ReadRequestsIn(p.a_wire), 0u) << "no fence for lazy Writes alone";
    EXPECT_EQ(p.a.unconfirmed(), 2u);
    EXPECT_TRUE(p.Drain(p.a).empty());
    EXPECT_EQ(p.pb.regions[7].memory, src) << "the data went all the same";
    ASSERT_TRUE(p.a.PostWrite(3, std::span(&b, 1), 7, 0));  // wants its completion
    p.Pump();
    EXPECT_EQ(ReadRequestsIn(p.a_wire), 1u);
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 3u);
    for (uint64_t i = 0; i < 3; ++i) {
        EXPECT_EQ(done[i].id, i + 1) << "posting order";
        EXPECT_EQ(done[i].status, OpStatus::Success);
    }
}

TEST(EngineConfirm, RequestConfirmationFencesLazyOperations) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    p.b.PostReceive(10, {});
    SendFlags lazy;
    lazy.lazy_confirm = true;
    ASSERT_TRUE(p.a.PostSend(1, {}, lazy));
    p.Pump();
    EXPECT_EQ(p.a.unconfirmed(), 1u);
    EXPECT_FALSE(p.a.WantsToSend());
    p.a.RequestConfirmation();
    EXPECT_TRUE(p.a.WantsToSend());
    p.Pump();
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].status, OpStatus::Success);
    EXPECT_EQ(ReadRequestsIn(p.a_wire), 1u);
    EXPECT_FALSE(p.a.WantsToSend()) << "the request is spent";
}

// A lazy operation the target refuses still fails by itself: the Terminate
// names it, with no fence needed.
TEST(EngineConfirm, LazyWriteToABadStagStillFails) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder), Confirming());
    p.pb.Add(7, 0, 64, true, false);
    Bytes src = Pattern(64);
    ConstBuffer b{src.data(), src.size()};
    ASSERT_TRUE(p.a.PostWrite(1, std::span(&b, 1), 7, 0, true));
    ASSERT_TRUE(p.a.PostWrite(2, std::span(&b, 1), 8, 0, true));  // no such STag
    p.Pump();
    auto done = p.Drain(p.a);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].status, OpStatus::Success);
    EXPECT_EQ(done[1].status, OpStatus::RemoteAccessError);
    EXPECT_EQ(ReadRequestsIn(p.a_wire), 0u);
}
}  // namespace

namespace {
using namespace iwarp;
using namespace iwarp_test;

Bytes Flatten(const Bytes &own, const std::vector<Engine::TxPiece> &pieces) {
    Bytes out;
    for (const Engine::TxPiece &p : pieces) {
        const uint8_t *base = p.data ? p.data : own.data() + p.offset;
        out.insert(out.end(), base, base + p.length);
    }
    return out;
}

// PullGather puts the same bytes on the wire as Pull, naming the Send and
// Write payloads (no copy) when operations are confirmed by Read.
TEST(EngineGather, SameBytesAsPullWithThePayloadNamed) {
    Bytes big = Pattern(200000), small = Pattern(7);
    auto post = [&](Engine &e) {
        ConstBuffer w[2] = {{big.data(), 100001}, {big.data() + 100001, big.size() - 100001}};
        ConstBuffer s{small.data(), small.size()};
        EXPECT_TRUE(e.PostWrite(1, std::span(w, 2), 7, 0));
        EXPECT_TRUE(e.PostSend(2, std::span(&s, 1)));
    };
    EngineOptions o;
    o.confirm_by_read = true;
    o.mss = 9000;
    Pair copy(Plain(Role::Initiator), Plain(Role::Responder), o), named(Plain(Role::Initiator), Plain(Role::Responder), o);
    post(copy.a);
    post(named.a);
    Bytes want;
    while (copy.a.Pull(&want, 64 * 1024) > 0) {
    }
    Bytes own;
    std::vector<Engine::TxPiece> pieces;
    size_t total = 0;
    for (size_t n; (n = named.a.PullGather(&own, &pieces, 64 * 1024)) > 0;) total += n;
    Bytes got = Flatten(own, pieces);
    EXPECT_EQ(total, got.size());
    EXPECT_EQ(got, want);
    size_t named_bytes = 0;
    for (const Engine::TxPiece &p : pieces)
        if (p.data) {
            EXPECT_TRUE((p.data >= big.data() && p.data + p.length <= big.data() + big.size()) ||
                        (p.data >= small.data() && p.data + p.length <= small.data() + small.size()));
            named_bytes += p.length;
        }
    EXPECT_EQ(named_bytes, big.size() + small.size()) << "every payload byte named, none copied";
}

// Without confirmation by Read an operation completes when it is pulled,
// so its buffer may be reused at once: PullGather copies then.
TEST(EngineGather, CopiesWhenOperationsCompleteOnTransmit) {
    Pair p(Plain(Role::Initiator), Plain(Role::Responder));
    Bytes data = Pattern(1000);
    ConstBuffer b{data.data(), data.size()};
    ASSERT_TRUE(p.a.PostSend(1, std::span(&b, 1)));
    Bytes own;
    std::vector<Engine::TxPiece> pieces;
    ASSERT_GT(p.a.PullGather(&own, &pieces, 1 << 20), 0u);
    for (const Engine::TxPiece &piece : pieces) EXPECT_EQ(piece.data, nullptr);
    Completion c;
    EXPECT_TRUE(p.a.PollCompletion(&c));
}
}  // namespace
