// Taking a network interface down under a connection (util.h: LinkDown),
// for the fault cases run with --fault-link.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "support/util.h"

namespace ndc {
namespace {

std::string g_fault_link;

bool RunIp(const std::string &iface, const char *state) {
    pid_t pid = fork();
    if (pid == 0) {
        execlp("ip", "ip", "link", "set", iface.c_str(), state, static_cast<char *>(nullptr));
        _exit(127);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string FirstLine(const std::string &path) {
    std::ifstream f(path);
    std::string line;
    std::getline(f, line);
    return line;
}

// The RDMA devices whose port 1 sits on `iface`, by their state files.
std::vector<std::string> PortStates(const std::string &iface) {
    std::vector<std::string> out;
    const std::string root = "/sys/class/infiniband/";
    DIR *d = opendir(root.c_str());
    if (!d) return out;
    while (dirent *e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        const std::string port = root + e->d_name + "/ports/1/";
        if (FirstLine(port + "gid_attrs/ndevs/0") == iface) out.push_back(port + "state");
    }
    closedir(d);
    return out;
}

// Until the interface and the RDMA ports on it are up again (bounded).
bool WaitUp(const std::string &iface) {
    Deadline d(WaitMs());
    for (;;) {
        bool up = FirstLine("/sys/class/net/" + iface + "/operstate") == "up";
        for (const auto &state : PortStates(iface))
            if (FirstLine(state).find("ACTIVE") == std::string::npos) up = false;
        if (up) return true;
        if (d.Expired()) return false;
        SleepMs(20);
    }
}

}  // namespace

const std::string &FaultLink() { return g_fault_link; }
void SetFaultLink(const std::string &iface) { g_fault_link = iface; }

LinkDown::LinkDown(const std::string &iface) : iface_(iface) { ok_ = down_ = RunIp(iface_, "down"); }

std::string LinkDown::Up() {
    if (!down_) return "";
    down_ = false;
    if (!RunIp(iface_, "up")) return "ip link set " + iface_ + " up failed";
    if (!WaitUp(iface_)) return iface_ + " or an RDMA port on it did not come back up";
    return "";
}

}  // namespace ndc
