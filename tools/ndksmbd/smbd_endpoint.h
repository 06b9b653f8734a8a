// An NDK adapter with an optional listener: where SMB Direct connections
// are made (Connect) and taken (AcceptOne) from. Connectors delivered by the
// listener's connect events wait in a queue until accepted.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "smbd_connection.h"

namespace smbd {

// "127.0.0.1", "::1", ... with `port` into `out`; false if not an IP address.
bool ParseAddress(const std::string &text, uint16_t port, sockaddr_storage *out, ULONG *length);

class Endpoint {
public:
    Endpoint() = default;
    ~Endpoint();
    Endpoint(const Endpoint &) = delete;
    Endpoint &operator=(const Endpoint &) = delete;

    bool Open(const std::string &address);            // the NDK adapter serving it
    bool Listen(uint16_t port, uint16_t *bound_port);  // port 0: any
    // The next connector from a connect event (nullptr after the timeout).
    NDK_CONNECTOR *NextConnector(int timeout_ms);
    NTSTATUS AcceptOne(const Limits &limits, std::unique_ptr<Connection> *out, int timeout_ms);
    // To `address` (default: the endpoint's own address) and `port`.
    NTSTATUS Connect(const std::string &address, uint16_t port, const Limits &limits,
                     std::unique_ptr<Connection> *out, int timeout_ms = 10000);

    NDK_ADAPTER *adapter() const { return adapter_; }
    NTSTATUS status = STATUS_SUCCESS;  // the last failure of Open/Listen

private:
    static VOID OnConnect(PVOID context, NDK_CONNECTOR *connector);
    std::string address_;
    NDK_ADAPTER *adapter_ = nullptr;
    NDK_LISTENER *listener_ = nullptr;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<NDK_CONNECTOR *> incoming_;
};

}  // namespace smbd
