// The loopback queue pair. Once connected (connection.cpp), a Send lands in
// the peer queue pair's posted Receives; before any connection, in its own
// (the kit CQ tests drive it that way). Sends complete at once.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "opennd/kit/adapter.h"
#include "opennd/kit/com.h"
#include "opennd/kit/completion_queue.h"
#include "opennd/kit/queue_pair.h"

namespace loopback {

// On the kit's queue pair: the kit checks every request; Read, Write and
// memory windows are left out (the kit's defaults: ND_NOT_SUPPORTED).
class QueuePair : public opennd::kit::QueuePair<QueuePair> {
public:
    QueuePair(IND2Adapter *adapter, const opennd::kit::QueuePairArgs &a);
    ~QueuePair() override;
    static QueuePair *Find(IUnknown *u);

    // Sends go to `peer` from now on (held: it may be released first).
    void Link(QueuePair *peer);
    // The connection is over: no peer; posted Receives complete ND_CANCELED.
    void Close();

    HRESULT STDMETHODCALLTYPE Flush() override;

private:
    friend class opennd::kit::QueuePair<QueuePair>;
    // Unconnected, a Send goes to this queue pair's own Receives.
    bool MayPost() const { return true; }
    HRESULT PostSend(void *ctx, const ND2_SGE *sge, ULONG nsge, ULONG flags, uint64_t length);
    HRESULT PostReceive(void *ctx, const ND2_SGE *sge, ULONG nsge);

    struct Recv {
        void *context;
        std::vector<ND2_SGE> sge;
    };
    // A Send's bytes into this queue pair's next Receive; the status the
    // Send completes with.
    HRESULT Deliver(const ND2_SGE *sge, ULONG nsge, uint64_t length, bool solicited);
    void Complete(opennd::kit::CompletionQueue *cq, void *ctx, ND2_REQUEST_TYPE type, HRESULT status, ULONG bytes,
                  bool solicited);
    void OnFinalRelease() override;
    QueuePair *TakePeer();  // unlinked; the caller drops the hold

    opennd::kit::ComPtr<IND2Adapter> adapter_;
    opennd::kit::ComPtr<opennd::kit::CompletionQueue> rcq_, icq_;
    void *context_;
    ULONG rdepth_;
    std::mutex mu_;  // receives_
    std::deque<Recv> receives_;
    std::mutex link_mu_;  // peer_ (never held with mu_)
    QueuePair *peer_ = nullptr;  // held
};

}  // namespace loopback
