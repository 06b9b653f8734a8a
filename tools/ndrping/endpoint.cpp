#include "endpoint.h"

#include <time.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <algorithm>
#include <cstring>

namespace ndrping {
namespace {

using opennd::client::Deadline;
using opennd::client::NowMs;

const char *TypeName(ND2_REQUEST_TYPE t) {
    switch (t) {
    case Nd2RequestTypeReceive: return "Receive";
    case Nd2RequestTypeSend: return "Send";
    case Nd2RequestTypeRead: return "RDMA Read";
    case Nd2RequestTypeWrite: return "RDMA Write";
    default: return "request";
    }
}

// After the peer's disconnect, completions still queued are worth this long
// a wait before the request is given up on.
constexpr uint64_t kGraceAfterDisconnectMs = 2000;

}  // namespace

std::string StatusName(HRESULT hr) { return opennd::client::StatusDescription(hr); }

Endpoint::~Endpoint() {
    try {
        Disconnect();
    } catch (const std::exception &) {
    }
    // Never leave disc_ov_ to a provider after we are gone: a deadline
    // already past cancels it and collects its completion.
    if (watching_) opennd::client::Await(conn_.connector, disc_ov_, ND_PENDING, Deadline::After(0), "");
    conn_.connector.reset();
    conn_.qp.reset();
    recv_.Reset();  // deregistered before the CQ and adapter go
    send_.Reset();
    conn_.Reset();
}

void Endpoint::Debug(const char *fmt, ...) {
    if (!debug_) return;
    va_list ap;
    va_start(ap, fmt);
    std::fputs("ndrping: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
}

void Endpoint::Check(HRESULT hr, const std::string &what) {
    if (FAILED(hr)) throw Error(what + " failed: " + StatusName(hr));
}

void Endpoint::Idle(unsigned *rounds) {
    // Spin a little (a reply often follows at once), then sleep in short
    // steps: the peer may be an emulated VM on the same two cores.
    if (++*rounds < 256) return;
    usleep(*rounds < 2048 ? 50 : 500);
}

void Endpoint::TimedOut(const char *what) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", timeout_ms_ / 1000.0);
    throw Error(std::string("timed out after ") + secs + " s waiting for " + what);
}

HRESULT Endpoint::Waited(const opennd::client::Status &s, const std::string &what) {
    if (s.timed_out()) TimedOut(what.c_str());
    return s.hr();
}

void Endpoint::Register(Region &r, size_t size, ULONG flags) {
    r.Reset();
    r.bytes.assign(size, 0);
    opennd::client::Status s = r.mr.Register(node_.adapter, node_.file, r.data(), r.bytes.size(), flags, Bound());
    Waited(s, "memory registration");
    Check(s);
}

void Endpoint::Open(const opennd::net::IpAddress &local, const Shape &shape) {
    shape_ = shape;
    std::string where = opennd::net::ToString(local.sa());
    opennd::client::Status s = node_.Open(local);
    if (s.call() == "NdOpenAdapter")
        throw Error("no ND adapter for " + where + ": NdOpenAdapter failed: " + StatusName(s.hr()) +
                    " (is a provider registered for that address? ndinfo lists them)");
    Check(s);
    // One SGE each way, as rping.
    Check(conn_.Open(node_.adapter, node_.file,
                     {shape.receives + shape.send_queue, shape.receives, shape.send_queue, 1, 1, 0, nullptr}));
    Register(recv_, size_t(shape.receive_bytes) * shape.receives, ND_MR_FLAG_ALLOW_LOCAL_WRITE);
    Register(send_, size_t(shape.send_bytes) * shape.send_slots, 0);
    // Receives go in before the connection exists: the peer's first Send may
    // arrive as soon as it does (an iWARP Send without a Receive is fatal).
    for (size_t slot = 0; slot < shape.receives; ++slot) PostReceive(slot);
    const ND2_ADAPTER_INFO &info = node_.info;
    Debug("adapter for %s: MaxTransferLength %u, read limits in/out %u/%u", where.c_str(), info.MaxTransferLength,
          info.MaxInboundReadLimit, info.MaxOutboundReadLimit);
}

void Endpoint::PostReceive(size_t slot) {
    ND2_SGE sge{recv_.data() + slot * shape_.receive_bytes, shape_.receive_bytes, recv_.mr->GetLocalToken()};
    Check(conn_.qp->Receive(reinterpret_cast<void *>(slot), &sge, 1), "Receive");
}

uint16_t Endpoint::Listen(const opennd::net::IpAddress &local, uint16_t port) {
    opennd::net::IpAddress a = local;
    opennd::net::SetPort(a.sa(), port);
    // rping: rdma_listen(id, 3)
    opennd::client::Status s = listener_.Listen(node_.adapter, node_.file, a, 3);
    if (s.call() == "IND2Listener::Bind")
        throw Error("cannot listen on " + opennd::net::ToString(a.sa(), true) + ": " + StatusName(s.hr()));
    Check(s);
    return listener_.port();
}

void Endpoint::AcceptOne() {
    Check(Waited(listener_.GetConnectionRequest(conn_.connector, Bound()), "a client to connect"),
          "GetConnectionRequest");
    ULONG in = 0, out = 0;
    if (SUCCEEDED(conn_.connector->GetReadLimits(&in, &out)))
        Debug("connection request: peer read limits in/out %u/%u", in, out);
    // rping's server accepts with rdma_cm's defaults; one Read in flight each
    // way is all its protocol uses.
    HRESULT hr = Waited(conn_.Accept({nullptr, 0, shape_.read_limit, shape_.read_limit}, Bound()),
                        "Accept to complete");
    if (FAILED(hr)) throw Error("Accept failed: " + StatusName(hr));
    connected_ = true;
    hr = conn_.connector->NotifyDisconnect(&disc_ov_);
    if (hr == ND_PENDING)
        watching_ = true;
    else
        Debug("NotifyDisconnect returned %s", StatusName(hr).c_str());
}

void Endpoint::Connect(const opennd::net::IpAddress &dest, uint32_t pause_ms) {
    std::string where = opennd::net::ToString(dest.sa(), true);
    // rping: responder_resources = initiator_depth = 1.
    HRESULT hr = Waited(opennd::client::Connect(conn_.connector, conn_.qp, dest,
                                                {nullptr, 0, shape_.read_limit, shape_.read_limit}, Bound()),
                        "the connection to " + where);
    if (FAILED(hr)) throw Error("cannot connect to " + where + ": " + StatusName(hr));
    if (pause_ms) {
        Debug("pausing %u ms before CompleteConnect", pause_ms);
        usleep(pause_ms * 1000);
    }
    hr = Waited(opennd::client::CompleteConnect(conn_.connector, Bound()), "CompleteConnect");
    if (FAILED(hr)) throw Error("CompleteConnect to " + where + " failed: " + StatusName(hr));
    connected_ = true;
    ULONG in = 0, out = 0;
    if (SUCCEEDED(conn_.connector->GetReadLimits(&in, &out))) Debug("connected: read limits in/out %u/%u", in, out);
    hr = conn_.connector->NotifyDisconnect(&disc_ov_);
    if (hr == ND_PENDING)
        watching_ = true;
    else
        Debug("NotifyDisconnect returned %s", StatusName(hr).c_str());
}

std::string Endpoint::PeerName() {
    opennd::net::IpAddress a;
    ULONG len = sizeof a.storage;
    if (FAILED(conn_.connector->GetPeerAddress(a.sa(), &len))) return "?";
    return opennd::net::ToString(a.sa(), true);
}

ULONG Endpoint::OutboundReadLimit() {
    ULONG in = 0, out = 0;
    Check(conn_.connector->GetReadLimits(&in, &out), "IND2Connector::GetReadLimits");
    return out;
}

bool Endpoint::Poll() {
    ND2_RESULT r[8];
    ULONG n = conn_.cq->GetResults(r, 8);
    for (ULONG i = 0; i < n; ++i) {
        if (FAILED(r[i].Status)) {
            // Flushes after a disconnect (ours, or the peer's where the
            // provider flushes on it) end the session; other failures are
            // errors of the exchange.
            if (closing_ || peer_gone_) continue;
            if (r[i].Status == ND_CANCELED && r[i].RequestType == Nd2RequestTypeReceive) {
                Debug("Receive flushed: the connection is gone");
                peer_gone_ = true;
                continue;
            }
            throw Error(std::string(TypeName(r[i].RequestType)) + " completed with " + StatusName(r[i].Status));
        }
        switch (r[i].RequestType) {
        case Nd2RequestTypeReceive: {
            size_t slot = reinterpret_cast<size_t>(r[i].RequestContext);
            Message m;
            m.bytes = r[i].BytesTransferred;
            const unsigned char *p = reinterpret_cast<const unsigned char *>(recv_.data()) + slot * shape_.receive_bytes;
            m.data.assign(p, p + std::min<ULONG>(m.bytes, shape_.receive_bytes));
            if (m.data.size() < kInfoBytes) m.data.resize(kInfoBytes);
            inbox_.push_back(std::move(m));
            if (!closing_ && shape_.repost) PostReceive(slot);  // at once, as rping's CQ handler does
            break;
        }
        case Nd2RequestTypeSend: ++sends_done_; break;
        case Nd2RequestTypeRead: ++reads_done_; break;
        case Nd2RequestTypeWrite: ++writes_done_; break;
        default: break;
        }
    }
    if (watching_ && conn_.connector->GetOverlappedResult(&disc_ov_, FALSE) != ND_PENDING) {
        watching_ = false;
        if (!closing_) {
            Debug("the peer disconnected");
            peer_gone_ = true;
        }
    }
    return n > 0;
}

bool Endpoint::WaitMessageOrEnd(Message *m, const char *what) {
    uint64_t deadline = NowMs() + timeout_ms_;
    unsigned rounds = 0;
    for (;;) {
        if (Poll()) rounds = 0;
        if (!inbox_.empty()) {
            *m = inbox_.front();
            inbox_.pop_front();
            return true;
        }
        if (peer_gone_) {
            Poll();  // anything that completed just before the disconnect
            if (!inbox_.empty()) continue;
            return false;
        }
        if (NowMs() > deadline) TimedOut(what);
        Idle(&rounds);
    }
}

Message Endpoint::WaitMessage(const char *what) {
    Message m;
    if (!WaitMessageOrEnd(&m, what)) throw Error(std::string("the peer disconnected while we waited for ") + what);
    return m;
}

void Endpoint::WaitCount(const uint64_t *done, uint64_t posted, uint64_t in_flight, const char *what) {
    uint64_t now = NowMs(), deadline = now + timeout_ms_, gone_at = 0;
    unsigned rounds = 0;
    while (*done + in_flight < posted) {
        if (Poll()) rounds = 0;
        if (*done + in_flight >= posted) break;
        now = NowMs();
        if (peer_gone_) {
            if (!gone_at) gone_at = now;
            if (now > gone_at + kGraceAfterDisconnectMs)
                throw Error(std::string("the peer disconnected while we waited for ") + what);
        }
        if (now > deadline) TimedOut(what);
        Idle(&rounds);
    }
}

void Endpoint::SendInfo(const BufferInfo &info) {
    unsigned char *buffer = SendBuffer();
    Encode(info, buffer);
    SendFrom(buffer, kInfoBytes);
}

unsigned char *Endpoint::SendBuffer() {
    WaitSends(shape_.send_slots == 1 ? "the previous Send to complete" : "a Send to complete", shape_.send_slots - 1);
    return reinterpret_cast<unsigned char *>(send_.data()) + (sends_posted_ % shape_.send_slots) * shape_.send_bytes;
}

void Endpoint::SendFrom(unsigned char *buffer, ULONG length) {
    ND2_SGE sge{buffer, length, send_.mr->GetLocalToken()};
    Check(conn_.qp->Send(nullptr, &sge, 1, 0), "Send");
    ++sends_posted_;
}

void Endpoint::Read(Region &local, uint32_t offset, uint32_t length, uint64_t remote_address, uint32_t token) {
    ND2_SGE sge{local.data() + offset, length, local.mr->GetLocalToken()};
    Debug("RDMA Read %u bytes from 0x%llx token 0x%08x", length,
          static_cast<unsigned long long>(remote_address + offset), token);
    Check(conn_.qp->Read(nullptr, &sge, 1, remote_address + offset, token, 0), "Read");
    ++reads_posted_;
}

void Endpoint::Write(Region &local, uint32_t offset, uint32_t length, uint64_t remote_address, uint32_t token) {
    ND2_SGE sge{local.data() + offset, length, local.mr->GetLocalToken()};
    Debug("RDMA Write %u bytes to 0x%llx token 0x%08x", length,
          static_cast<unsigned long long>(remote_address + offset), token);
    Check(conn_.qp->Write(nullptr, &sge, 1, remote_address + offset, token, 0), "Write");
    ++writes_posted_;
}

bool Endpoint::WaitPeerDisconnect() {
    uint64_t deadline = NowMs() + timeout_ms_;
    unsigned rounds = 0;
    while (!peer_gone_) {
        if (Poll()) rounds = 0;
        if (peer_gone_) break;
        if (NowMs() > deadline) return false;
        Idle(&rounds);
    }
    return true;
}

void Endpoint::Disconnect() {
    if (!connected_) return;
    connected_ = false;
    closing_ = true;
    HRESULT hr = Waited(conn_.Disconnect(Bound()), "Disconnect to complete");
    if (FAILED(hr)) Debug("Disconnect: %s", StatusName(hr).c_str());
    if (watching_) {
        // A local Disconnect completes NotifyDisconnect too; give it the
        // timeout, past which Await takes the OVERLAPPED back by cancelling.
        opennd::client::Await(conn_.connector, disc_ov_, ND_PENDING, Bound(), "NotifyDisconnect");
        watching_ = false;
    }
}

}  // namespace ndrping
