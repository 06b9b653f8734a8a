// ndconformance support: the peer process. Two-sided cases never use a
// second thread as the other end: they start a fresh process (this same
// binary, re-executed through /proc/self/exe in peer mode) that loads the
// same provider and then does what the case asks over the control channel.
// The ND connection between the two carries the data.
//
// Peer commands (replies are "ok k=v..." or "err what=..."): see
// peer_server.cpp for the full list. While the peer waits for a command it
// keeps reaping its CQs into buffers (unless told to keep quiet), like a
// real application polling for completions.
#pragma once

#include <sys/types.h>

#include <string>

#include "support/control.h"
#include "support/util.h"

namespace ndc {

class Peer {
public:
    Peer() = default;
    ~Peer();
    Peer(const Peer &) = delete;
    Peer &operator=(const Peer &) = delete;

    // Starts the peer process and has it open the adapter for `address`.
    // "" or why not.
    std::string Start(const IpAddress &address);
    // Sends a command and waits for its reply (bounded by ms, default the
    // wait bound), reaping this process's pumped CQs meanwhile. A failed
    // reply or a timeout is reported as a test failure and returned as err.
    Msg Call(const Msg &m, uint64_t ms = 0);
    // Split form: send now, collect the reply later.
    bool Post(const Msg &m);
    Msg Wait(uint64_t ms = 0, bool report = true);
    // SIGKILL the peer and reap it (no failure for its death).
    void Kill();
    // Sends it a signal (SIGSTOP, say), on its host; false if not sent.
    bool Signal(int sig);
    // Asks the peer to exit and reaps it; reports a peer that crashed or
    // failed. Called by the destructor if not before.
    void Stop();
    pid_t pid() const { return pid_; }
    bool running() const { return pid_ > 0; }

    // Set before Start: the peer runs in a user namespace of its own, so it
    // has no capability over this process: no ptrace access (and so no
    // cross-memory attach) to us while we are not dumpable.
    bool isolated = false;

private:
    int Reap(uint64_t ms);
    std::string StartRemote(const IpAddress &address);
    Channel ch_;
    pid_t pid_ = -1;    // on the peer's host when remote_
    bool remote_ = false;
};

// Starts this binary as a peer (`args`, then --control-fd control_fd), in
// network namespace `netns_fd` if >= 0, in a user namespace of its own if
// `isolated`. The child's pid, or -1 if fork failed.
pid_t SpawnPeer(std::vector<std::string> args, int control_fd, int netns_fd, bool isolated);

// The peer side: runs commands from control_fd until told to exit or the
// channel closes. Returns the process exit code.
int RunPeer(int control_fd);

// The arguments that start a peer of this process's provider (exe, --peer
// and the provider options). Set by main.
void SetPeerArguments(const std::vector<std::string> &args);

// Peers run in network namespace `name` (as on another host), on these
// addresses (one per family). "" or why not.
std::string SetPeerNamespace(const std::string &name, const std::vector<std::string> &addresses);
// The address of a peer started for `ours`: `ours` itself, or in namespace
// mode the peer's address of that family. Cases connect to the peer there.
IpAddress PeerIp(const IpAddress &ours);
// Peers are started by the peer server at `host_port` on another machine
// (remote_peer.h) and use these addresses there. "" or why not.
std::string SetRemotePeers(const std::string &host_port, const std::vector<std::string> &addresses);
// True when peers run in another network namespace (--peer-netns) or on
// another machine (--peer-host).
bool PeerElsewhere();

}  // namespace ndc
