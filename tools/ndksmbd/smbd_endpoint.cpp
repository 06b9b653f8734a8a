#include "smbd_endpoint.h"

#include <arpa/inet.h>

#include <cstring>

namespace smbd {

bool ParseAddress(const std::string &text, uint16_t port, sockaddr_storage *out, ULONG *length) {
    *out = sockaddr_storage{};
    auto *v4 = reinterpret_cast<sockaddr_in *>(out);
    auto *v6 = reinterpret_cast<sockaddr_in6 *>(out);
    if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        *length = sizeof(sockaddr_in);
        return true;
    }
    if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        *length = sizeof(sockaddr_in6);
        return true;
    }
    return false;
}

Endpoint::~Endpoint() {
    if (listener_) CloseNdk(listener_, listener_->Dispatch->NdkCloseListener);
    for (NDK_CONNECTOR *c : incoming_) {  // never accepted: refuse and close
        c->Dispatch->NdkReject(c, nullptr, 0);
        CloseNdk(c, c->Dispatch->NdkCloseConnector);
    }
    if (adapter_) {
        NdkWait wait;
        wait.Finish(NdkCloseAdapter(adapter_, NdkWait::Close, &wait), 10000);
    }
}

bool Endpoint::Open(const std::string &address) {
    sockaddr_storage a;
    ULONG len = 0;
    if (!ParseAddress(address, 0, &a, &len)) {
        status = STATUS_INVALID_ADDRESS;
        return false;
    }
    address_ = address;
    status = NdkOpenAdapterByAddress(NDK_VERSION{NDK_VERSION_MAJOR, NDK_VERSION_MINOR},
                                     reinterpret_cast<SOCKADDR *>(&a), len, &adapter_);
    return NT_SUCCESS(status);
}

VOID Endpoint::OnConnect(PVOID context, NDK_CONNECTOR *connector) {
    Endpoint *e = static_cast<Endpoint *>(context);
    std::lock_guard<std::mutex> lock(e->mu_);
    e->incoming_.push_back(connector);
    e->cv_.notify_all();
}

bool Endpoint::Listen(uint16_t port, uint16_t *bound_port) {
    status = adapter_->Dispatch->NdkCreateListener(adapter_, OnConnect, this, nullptr, nullptr, &listener_);
    if (!NT_SUCCESS(status)) return false;
    sockaddr_storage a;
    ULONG len = 0;
    ParseAddress(address_, port, &a, &len);
    NdkWait wait;
    status = wait.Finish(listener_->Dispatch->NdkListen(listener_, reinterpret_cast<PSOCKADDR>(&a), len,
                                                        NdkWait::Request, &wait),
                         10000);
    if (!NT_SUCCESS(status)) return false;
    len = sizeof a;
    status = listener_->Dispatch->NdkGetLocalAddress(listener_, reinterpret_cast<PSOCKADDR>(&a), &len);
    if (!NT_SUCCESS(status)) return false;
    *bound_port = ntohs(a.ss_family == AF_INET ? reinterpret_cast<sockaddr_in *>(&a)->sin_port
                                               : reinterpret_cast<sockaddr_in6 *>(&a)->sin6_port);
    return true;
}

NDK_CONNECTOR *Endpoint::NextConnector(int timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return !incoming_.empty(); }))
        return nullptr;
    NDK_CONNECTOR *c = incoming_.front();
    incoming_.pop_front();
    return c;
}

NTSTATUS Endpoint::AcceptOne(const Limits &limits, std::unique_ptr<Connection> *out, int timeout_ms) {
    NDK_CONNECTOR *c = NextConnector(timeout_ms);
    if (!c) return STATUS_IO_TIMEOUT;
    return Connection::Accept(adapter_, c, limits, out, timeout_ms);
}

NTSTATUS Endpoint::Connect(const std::string &address, uint16_t port, const Limits &limits,
                           std::unique_ptr<Connection> *out, int timeout_ms) {
    sockaddr_storage a;
    ULONG len = 0;
    if (!ParseAddress(address.empty() ? address_ : address, port, &a, &len)) return STATUS_INVALID_ADDRESS;
    return Connection::Connect(adapter_, reinterpret_cast<sockaddr *>(&a), len, limits, out, timeout_ms);
}

}  // namespace smbd
