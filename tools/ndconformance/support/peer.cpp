// The test-process side of a peer: spawning it, talking to it, reaping it.
#include "support/peer.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <utility>

#include "support/objects.h"
#include "support/remote_peer.h"

namespace ndc {

namespace {
std::vector<std::string> g_peer_args;
std::string g_netns;                   // the peer's network namespace ("": ours)
std::vector<IpAddress> g_peer_ips;     // its addresses there, one per family
}

void SetPeerArguments(const std::vector<std::string> &args) { g_peer_args = args; }

std::string SetPeerNamespace(const std::string &name, const std::vector<std::string> &addresses) {
    std::string path = "/var/run/netns/" + name;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "no network namespace " + name + " (" + path + ")";
    close(fd);
    g_netns = name;
    g_peer_ips.clear();
    for (const auto &a : addresses) g_peer_ips.push_back(ParseIp(a));
    return "";
}

std::string SetRemotePeers(const std::string &host_port, const std::vector<std::string> &addresses) {
    std::string why = SetPeerHost(host_port);
    if (!why.empty()) return why;
    g_peer_ips.clear();
    for (const auto &a : addresses) g_peer_ips.push_back(ParseIp(a));
    return "";
}

bool PeerElsewhere() { return !g_netns.empty() || PeerHostSet(); }

IpAddress PeerIp(const IpAddress &ours) {
    for (const IpAddress &p : g_peer_ips)
        if (p.family() == ours.family()) return p;
    return ours;
}

Peer::~Peer() { Stop(); }

pid_t SpawnPeer(std::vector<std::string> args, int control_fd, int netns_fd, bool isolated) {
    args.push_back("--control-fd");
    args.push_back(std::to_string(control_fd));
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        // Only async-signal-safe calls between fork and exec.
        if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0) _exit(126);  // "as if on another host"
        if (isolated && unshare(CLONE_NEWUSER) != 0) _exit(125);
        fcntl(control_fd, F_SETFD, 0);
        execv("/proc/self/exe", argv.data());
        _exit(127);
    }
    return pid;
}

namespace {

// A started peer process and our end of its control channel.
struct Launched {
    pid_t pid = -1;
    int fd = -1;
    std::string env;  // the environment it started with (EnvText)
};

// This process's environment, which a peer inherits.
std::string EnvText() {
    std::string text;
    for (char **e = environ; *e; ++e) (text += *e) += '\n';
    return text;
}

Launched Launch(bool isolated, std::string *why) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        *why = "socketpair failed";
        return {};
    }
    int ns = -1;
    if (!g_netns.empty()) {
        ns = open(("/var/run/netns/" + g_netns).c_str(), O_RDONLY | O_CLOEXEC);
        if (ns < 0) {
            close(sv[0]);
            close(sv[1]);
            *why = "cannot open network namespace " + g_netns;
            return {};
        }
    }
    const pid_t pid = SpawnPeer(g_peer_args, sv[1], ns, isolated);
    close(sv[1]);
    if (ns >= 0) close(ns);
    if (pid < 0) {
        close(sv[0]);
        *why = "fork failed";
        return {};
    }
    return {pid, sv[0], EnvText()};
}

// The next case's peer, started while this case runs: starting one (exec,
// loading the provider) is most of a short case's time in an emulated VM.
// Only from the main thread: a peer dies with the thread that forked it
// (PR_SET_PDEATHSIG), and a case's own threads end with the case. Not one
// started under an environment a case had changed for itself.
Launched g_spare;

bool OnMainThread() { return gettid() == getpid(); }

Launched TakeSpare() {
    Launched s = std::exchange(g_spare, Launched{});
    if (s.pid <= 0) return {};
    const bool died = waitpid(s.pid, nullptr, WNOHANG) != 0;  // (or was reaped)
    if (!died && s.env == EnvText()) return s;
    if (!died) {
        kill(s.pid, SIGKILL);
        waitpid(s.pid, nullptr, 0);
    }
    close(s.fd);
    return {};
}

}  // namespace

std::string Peer::Start(const IpAddress &address) {
    if (PeerHostSet()) return StartRemote(address);
    const bool spares = !isolated && OnMainThread();
    Launched l = spares ? TakeSpare() : Launched{};
    std::string why;
    if (l.pid <= 0) l = Launch(isolated, &why);
    if (l.pid <= 0) return why;
    if (spares) g_spare = Launch(false, &why);  // none is fine: the next case starts its own
    pid_ = l.pid;
    ch_.Attach(l.fd);
    Msg r = Call(Msg("open").Set("addr", IpText(PeerIp(address))));
    if (!r.ok()) return "peer could not start: " + r.error();
    return "";
}

// A peer the peer server starts on its host (remote_peer.h).
std::string Peer::StartRemote(const IpAddress &address) {
    std::string answer, why;
    const int fd = AskPeerHost(isolated ? "peer isolated" : "peer", &answer, &why);
    if (fd < 0) return why;
    int pid = 0;
    if (std::sscanf(answer.c_str(), "pid %d", &pid) != 1 || pid <= 0) {
        close(fd);
        return "the peer server could not start a peer (" + answer + ")";
    }
    pid_ = pid;
    remote_ = true;
    ch_.Attach(fd);
    Msg r = Call(Msg("open").Set("addr", IpText(PeerIp(address))));
    if (!r.ok()) return "peer could not start: " + r.error();
    return "";
}

bool Peer::Signal(int sig) {
    if (pid_ <= 0) return false;
    if (!remote_) return kill(pid_, sig) == 0;
    std::string answer, why;
    const int fd = AskPeerHost("signal " + std::to_string(pid_) + " " + std::to_string(sig), &answer, &why);
    if (fd < 0) {
        Report(why);
        return false;
    }
    close(fd);
    return answer == "ok";
}

bool Peer::Post(const Msg &m) {
    if (pid_ <= 0) return false;
    return ch_.Send(m);
}

Msg Peer::Wait(uint64_t ms, bool report) {
    Msg r;
    bool closed = false;
    if (pid_ <= 0) {
        r = Err("the peer process is not running");
    } else if (!ch_.Recv(&r, ms ? ms : WaitMs() + 2000, PumpAll, &closed)) {
        r = Err(closed ? "the peer process went away (crashed or exited)" : "no reply from the peer process in time");
    }
    if (r.Has("warn")) Report("peer: " + r.Str("warn"));
    if (!r.ok() && report) Report("peer: " + r.error());
    return r;
}

Msg Peer::Call(const Msg &m, uint64_t ms) {
    if (!Post(m)) {
        Msg r = Err("cannot send '" + m.verb() + "' to the peer process");
        Report(r.error());
        return r;
    }
    Msg r = Wait(ms, false);
    if (!r.ok()) Report("peer, " + m.verb() + ": " + r.error());
    return r;
}

int Peer::Reap(uint64_t ms) {
    Deadline d(ms);
    int status = 0;
    if (remote_) {  // its exit is the channel's end (its status stays there)
        for (bool closed = false; !closed && !d.Expired();) {
            Msg m;
            ch_.Recv(&m, 50, nullptr, &closed);
        }
        if (!d.Expired()) {
            pid_ = -1;
            return 0;
        }
        Signal(SIGKILL);
        pid_ = -1;
        return 256;
    }
    for (;;) {
        pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) break;
        if (r < 0) return -1;
        if (d.Expired()) {
            kill(pid_, SIGKILL);
            waitpid(pid_, &status, 0);
            pid_ = -1;
            return 256;  // did not exit in time
        }
        SleepMs(2);
    }
    pid_ = -1;
    return status;
}

void Peer::Kill() {
    if (pid_ <= 0) return;
    Signal(SIGKILL);
    int status;
    if (!remote_) waitpid(pid_, &status, 0);
    pid_ = -1;
    ch_.Close();
}

void Peer::Stop() {
    if (pid_ <= 0) return;
    pid_t pid = pid_;
    ch_.Send(Msg("exit"));
    int status = Reap(WaitMs());
    ch_.Close();
    if (status == 256)
        Report("the peer process (pid " + std::to_string(pid) + ") did not exit; killed");
    else if (status >= 0 && WIFSIGNALED(status))
        Report("the peer process died with signal " + std::to_string(WTERMSIG(status)));
    else if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0)
        Report("the peer process exited with status " + std::to_string(WEXITSTATUS(status)));
}

}  // namespace ndc
