#include "support/simultaneous.h"

namespace ndc {

SimultaneousResult ConnectSimultaneously(Node &node, Listener &listener, Conn &active, Conn &passive,
                                         const IpAddress &dest, bool accept) {
    SimultaneousResult res;
    enum class A { Connecting, Completing, Done } a = A::Connecting;
    enum class P { Waiting, Accepting, Done } p = P::Waiting;
    Ov ov_connect, ov_get, ov_accept;

    IpAddress local = WithPort(node.local, 0);
    HRESULT hr = active.connector->Bind(local.sa(), local.length());
    if (FAILED(hr)) {
        res.active = hr;
        a = A::Done;
    } else {
        hr = active.connector->Connect(active.qp.get(), dest.sa(), dest.length(), 8, 8, nullptr, 0, &ov_connect);
        if (hr != ND_PENDING && FAILED(hr)) {
            res.active = hr;
            a = A::Done;
        } else if (hr == ND_SUCCESS) {
            hr = active.connector->CompleteConnect(&ov_connect);
            if (hr != ND_PENDING) {
                res.active = hr;
                a = A::Done;
            } else {
                a = A::Completing;
            }
        }
    }
    HRESULT get_hr = listener.listener->GetConnectionRequest(passive.connector.get(), &ov_get);
    if (get_hr != ND_PENDING && get_hr != ND_SUCCESS) {
        res.passive = get_hr;
        p = P::Done;
    }
    auto start_answer = [&] {
        if (!accept) {
            res.passive = passive.connector->Reject(nullptr, 0);
            p = P::Done;
            return;
        }
        HRESULT h = passive.connector->Accept(passive.qp.get(), 8, 8, nullptr, 0, &ov_accept);
        if (h == ND_PENDING) {
            p = P::Accepting;
        } else {
            res.passive = h;
            p = P::Done;
        }
    };
    if (p == P::Waiting && get_hr == ND_SUCCESS) start_answer();

    Deadline d(WaitMs());
    Backoff b;
    while ((a != A::Done || p != P::Done) && !d.Expired()) {
        bool progressed = false;
        if (a == A::Connecting) {
            HRESULT h = active.connector->GetOverlappedResult(&ov_connect, FALSE);
            if (h != ND_PENDING) {
                progressed = true;
                if (FAILED(h)) {
                    res.active = h;
                    a = A::Done;
                } else {
                    ov_connect.Reuse();
                    h = active.connector->CompleteConnect(&ov_connect);
                    if (h == ND_PENDING) {
                        a = A::Completing;
                    } else {
                        res.active = h;
                        a = A::Done;
                    }
                }
            }
        } else if (a == A::Completing) {
            HRESULT h = active.connector->GetOverlappedResult(&ov_connect, FALSE);
            if (h != ND_PENDING) {
                progressed = true;
                res.active = h;
                a = A::Done;
            }
        }
        if (p == P::Waiting) {
            HRESULT h = listener.listener->GetOverlappedResult(&ov_get, FALSE);
            if (h != ND_PENDING) {
                progressed = true;
                if (FAILED(h)) {
                    res.passive = h;
                    p = P::Done;
                } else {
                    start_answer();
                }
            }
        } else if (p == P::Accepting) {
            HRESULT h = passive.connector->GetOverlappedResult(&ov_accept, FALSE);
            if (h != ND_PENDING) {
                progressed = true;
                res.passive = h;
                p = P::Done;
            }
        }
        if (progressed)
            b.Reset();
        else
            b.Pause();
    }
    // Whatever is still pending is a hang: cancel it before the OVERLAPPEDs
    // go out of scope.
    if (a != A::Done) {
        res.detail += a == A::Connecting ? "Connect never completed; " : "CompleteConnect never completed; ";
        Finish(active.connector.get(), &ov_connect, ND_PENDING, 1);
    }
    if (p == P::Waiting) {
        res.detail += "GetConnectionRequest never completed; ";
        Finish(listener.listener.get(), &ov_get, ND_PENDING, 1);
    } else if (p == P::Accepting) {
        res.detail += "Accept never completed; ";
        Finish(passive.connector.get(), &ov_accept, ND_PENDING, 1);
    }
    return res;
}

}  // namespace ndc
