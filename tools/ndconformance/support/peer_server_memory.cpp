// The peer process's memory verbs: buffers, receives, shared receive
// queues and memory windows.
#include "support/peer_server.h"

namespace ndc::peer_server {

std::optional<Msg> Server::MemoryVerb(const Msg &m) {
    const std::string &v = m.verb();
    if (v == "reg") {
        auto mem = std::make_unique<Mem>(m.U64("size"));
        if (m.Has("seed")) {
            if (m.U64("anti", 0))
                FillAntiPattern(mem->data(), mem->size(), static_cast<uint32_t>(m.U64("seed")));
            else
                FillPattern(mem->data(), mem->size(), static_cast<uint32_t>(m.U64("seed")));
        }
        HRESULT hr = mem->Register(node_.adapter.get(), node_.file, static_cast<ULONG>(m.U64("flags", kAllRights)));
        NeedHr(hr, "Register");
        Msg r = Ok().Set("addr", mem->addr()).Set("token", static_cast<uint64_t>(mem->remote_token()));
        r.Set("ltoken", static_cast<uint64_t>(mem->local_token()));
        mems_[m.Str("name")] = std::move(mem);
        return r;
    }
    if (v == "dereg") return Ok().Set("status", static_cast<int64_t>(M(m.Str("name")).Deregister()));
    if (v == "free") {
        mems_.erase(m.Str("name"));
        return Ok();
    }
    if (v == "fill") {
        Mem &mem = M(m.Str("name"));
        size_t off = m.U64("off"), len = m.U64("len", mem.size() - off);
        if (m.U64("anti", 0))
            FillAntiPattern(mem.data() + off, len, static_cast<uint32_t>(m.U64("seed")));
        else
            FillPattern(mem.data() + off, len, static_cast<uint32_t>(m.U64("seed")));
        return Ok();
    }
    if (v == "check") {
        Mem &mem = M(m.Str("name"));
        size_t off = m.U64("off"), len = m.U64("len", mem.size() - off);
        std::string bad = CheckPattern(mem.data() + off, len, static_cast<uint32_t>(m.U64("seed")));
        Need(bad.empty(), bad);
        return Ok();
    }
    if (v == "recv") {
        Mem &mem = M(m.Str("mem"));
        size_t n = m.U64("n", 1), off = m.U64("off"), len = m.U64("len"), stride = m.U64("stride", len);
        std::string target = m.Str("c");
        for (size_t i = 0; i < n; ++i) {
            ND2_SGE sge = mem.Sge(off + i * stride, len);
            void *ctx = reinterpret_cast<void *>(m.U64("ctx") + i);
            HRESULT hr;
            if (target.rfind("srq:", 0) == 0) {
                auto it = srqs_.find(target.substr(4));
                Need(it != srqs_.end(), "no SRQ " + target);
                hr = it->second->Receive(ctx, len ? &sge : nullptr, len ? 1 : 0);
            } else {
                hr = C(m).c.qp->Receive(ctx, len ? &sge : nullptr, len ? 1 : 0);
            }
            NeedHr(hr, "Receive " + std::to_string(i));
        }
        return Ok();
    }
    if (v == "srq") {
        Ref<IND2SharedReceiveQueue> &s = srqs_[m.Str("name")];
        NeedHr(node_.adapter->CreateSharedReceiveQueue(IID_IND2SharedReceiveQueue, node_.file,
                                                       static_cast<ULONG>(m.U64("depth", 64)),
                                                       static_cast<ULONG>(m.U64("sge", 1)),
                                                       static_cast<ULONG>(m.U64("threshold", 0)), 0, 0, s.put_void()),
               "CreateSharedReceiveQueue");
        return Ok();
    }
    if (v == "mw") return Bind(m);
    if (v == "inval") {
        auto it = mws_.find(m.Str("name"));
        Need(it != mws_.end(), "no window " + m.Str("name"));
        PConn &pc = C(m);
        static char marker;
        HRESULT hr = pc.c.qp->Invalidate(&marker, it->second.get(), static_cast<ULONG>(m.U64("flags")));
        Msg r = Ok().Set("hr", static_cast<int64_t>(hr));
        if (SUCCEEDED(hr)) {
            ND2_RESULT res;
            bool got = pc.cq.NextWhere([](const ND2_RESULT &x) { return x.RequestContext == &marker; }, &res);
            r.Set("status", static_cast<int64_t>(got ? res.Status : kHang));
        }
        return r;
    }
    if (v == "mwfree") {
        mws_.erase(m.Str("name"));
        return Ok();
    }
    return std::nullopt;
}

Msg Server::Bind(const Msg &m) {
    std::string name = m.Str("name");
    Ref<IND2MemoryWindow> &mw = mws_[name];
    if (!mw) NeedHr(node_.adapter->CreateMemoryWindow(IID_IND2MemoryWindow, mw.put_void()), "CreateMemoryWindow");
    PConn &pc = C(m);
    Mem &mem = M(m.Str("mem"));
    size_t off = m.U64("off"), len = m.U64("len");
    static char marker;
    HRESULT hr = pc.c.qp->Bind(&marker, mem.mr(), mw.get(), mem.data() + off, len, static_cast<ULONG>(m.U64("flags")));
    UINT32 token = mw->GetRemoteToken();  // valid as soon as Bind returns (R081)
    Msg r = Ok();
    r.Set("hr", static_cast<int64_t>(hr)).Set("token", static_cast<uint64_t>(token)).Set("addr", mem.addr(off));
    if (SUCCEEDED(hr) && !(m.U64("flags") & ND_OP_FLAG_SILENT_SUCCESS)) {
        ND2_RESULT res;
        bool got = pc.cq.NextWhere([](const ND2_RESULT &x) { return x.RequestContext == &marker; }, &res);
        r.Set("status", static_cast<int64_t>(got ? res.Status : kHang));
        r.Set("token_after", static_cast<uint64_t>(mw->GetRemoteToken()));
    }
    return r;
}

}  // namespace ndc::peer_server
