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
#include "opennd/kit/post_checks.h"

namespace loopback {

class QueuePair : public opennd::kit::Unknown<IND2QueuePair> {
public:
    QueuePair(IND2Adapter *adapter, const opennd::kit::QueuePairArgs &a);
    ~QueuePair() override;
    static QueuePair *Find(IUnknown *u);

    // Sends go to `peer` from now on (held: it may be released first).
    void Link(QueuePair *peer);
    // The connection is over: no peer; posted Receives complete ND_CANCELED.
    void Close();

    HRESULT STDMETHODCALLTYPE Flush() override;
    HRESULT STDMETHODCALLTYPE Send(VOID *ctx, const ND2_SGE sge[], ULONG nsge, ULONG flags) override;
    HRESULT STDMETHODCALLTYPE Receive(VOID *ctx, const ND2_SGE sge[], ULONG nsge) override;
    HRESULT STDMETHODCALLTYPE Bind(VOID *, IUnknown *, IUnknown *, const VOID *, SIZE_T, ULONG) override {
        return ND_NOT_SUPPORTED;
    }
    HRESULT STDMETHODCALLTYPE Invalidate(VOID *, IUnknown *, ULONG) override { return ND_NOT_SUPPORTED; }
    HRESULT STDMETHODCALLTYPE Read(VOID *, const ND2_SGE[], ULONG, UINT64, UINT32, ULONG) override {
        return ND_NOT_SUPPORTED;
    }
    HRESULT STDMETHODCALLTYPE Write(VOID *, const ND2_SGE[], ULONG, UINT64, UINT32, ULONG) override {
        return ND_NOT_SUPPORTED;
    }

private:
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
    const opennd::kit::PostLimits limits_;
    std::mutex mu_;  // receives_
    std::deque<Recv> receives_;
    std::mutex link_mu_;  // peer_ (never held with mu_)
    QueuePair *peer_ = nullptr;  // held
};

}  // namespace loopback
