// ndperf mr: what memory registration costs (as Windows' ndmrlat and
// ndmrrate measure it), local only. Each thread owns a buffer of the size
// (written once, so its pages exist) and one memory region object, and
// repeats Register then Deregister on it; the latency of each is sampled, and
// the rate is register+deregister pairs per second over all threads.
#include <algorithm>
#include <barrier>
#include <memory>
#include <stdexcept>
#include <thread>

#include "endpoint.h"

namespace ndperf {
namespace {

constexpr ULONG kFlags = ND_MR_FLAG_ALLOW_LOCAL_WRITE | ND_MR_FLAG_ALLOW_REMOTE_READ | ND_MR_FLAG_ALLOW_REMOTE_WRITE;

uint32_t DefaultIters(uint32_t size) { return size <= (1u << 20) ? 2000 : size <= (16u << 20) ? 500 : 200; }

struct Worker {
    HANDLE file = nullptr;
    IND2MemoryRegion *mr = nullptr;
    std::vector<char> buffer;
    std::vector<double> reg_us, dereg_us;
    uint64_t start = 0, end = 0;
    bool truncated = false;
    std::string error;
    ~Worker() {
        if (mr) mr->Release();
        if (file) CloseHandle(file);
    }
};

HRESULT Finish(IND2MemoryRegion *mr, OVERLAPPED *ov, HRESULT hr, bool blocking) {
    if (hr == ND_PENDING && blocking) return mr->GetOverlappedResult(ov, TRUE);
    return Wait(mr, ov, hr);
}

// One register + deregister; adds the samples when `record`.
void Cycle(Worker &w, bool blocking, bool record) {
    OVERLAPPED ov{};
    uint64_t t0 = NowNs();
    Check(Finish(w.mr, &ov, w.mr->Register(w.buffer.data(), w.buffer.size(), kFlags, &ov), blocking), "Register");
    uint64_t t1 = NowNs();
    Check(Finish(w.mr, &ov, w.mr->Deregister(&ov), blocking), "Deregister");
    uint64_t t2 = NowNs();
    if (record) {
        w.reg_us.push_back((t1 - t0) / 1000.0);
        w.dereg_us.push_back((t2 - t1) / 1000.0);
    }
}

Result Measure(const Options &o, Adapter &adapter, uint32_t size, uint32_t threads) {
    uint32_t iters = o.iters ? o.iters : DefaultIters(size);
    uint32_t warmup = o.warmup ? o.warmup : std::max<uint32_t>(iters / 10, 5);
    std::vector<std::unique_ptr<Worker>> workers;
    for (uint32_t k = 0; k < threads; ++k) {
        auto w = std::make_unique<Worker>();
        Check(adapter.get()->CreateOverlappedFile(&w->file), "CreateOverlappedFile");
        Check(adapter.get()->CreateMemoryRegion(IID_IND2MemoryRegion, w->file, reinterpret_cast<void **>(&w->mr)),
              "CreateMemoryRegion");
        w->buffer.assign(size, 1);
        w->reg_us.reserve(iters);
        w->dereg_us.reserve(iters);
        workers.push_back(std::move(w));
    }
    std::barrier sync(threads);
    uint64_t guard = static_cast<uint64_t>(o.max_seconds * 1e9);
    std::vector<std::thread> pool;
    for (auto &wp : workers)
        pool.emplace_back([&, w = wp.get()] {
            try {
                for (uint32_t i = 0; i < warmup; ++i) Cycle(*w, o.blocking, false);
            } catch (const std::exception &e) {
                w->error = e.what();
                sync.arrive_and_drop();
                return;
            }
            sync.arrive_and_wait();
            w->start = NowNs();
            try {
                for (uint32_t i = 0; i < iters; ++i) {
                    Cycle(*w, o.blocking, true);
                    if ((i & 15) == 15 && NowNs() - w->start > guard) {
                        w->truncated = true;
                        break;
                    }
                }
            } catch (const std::exception &e) {
                w->error = e.what();
            }
            w->end = NowNs();
        });
    for (auto &t : pool) t.join();
    Result r;
    r.test = "mr";
    r.size = size;
    r.threads = threads;
    r.blocking = o.blocking;
    uint64_t start = UINT64_MAX, end = 0;
    for (auto &w : workers) {
        if (!w->error.empty()) throw std::runtime_error(w->error);
        r.samples_us.insert(r.samples_us.end(), w->reg_us.begin(), w->reg_us.end());
        r.samples2_us.insert(r.samples2_us.end(), w->dereg_us.begin(), w->dereg_us.end());
        start = std::min(start, w->start);
        end = std::max(end, w->end);
        r.truncated = r.truncated || w->truncated;
    }
    r.iters = static_cast<uint32_t>(r.samples_us.size());
    r.messages = r.samples_us.size();
    r.bytes = r.messages * size;
    r.seconds = (end - start) / 1e9;
    return r;
}

}  // namespace

int RunMr(const Options &o, std::vector<Result> *results) {
    Adapter adapter;
    adapter.Open(ParseAddressOrThrow(o.address), o.provider);
    adapter.CheckTransport(o.transport);
    size_t rows = o.sizes.size() * o.threads.size(), row = 0;
    for (uint32_t size : o.sizes) {
        if (size == 0) throw std::runtime_error("mr: a size must be at least 1 byte");
        for (uint32_t threads : o.threads) {
            Progress(o, "[" + std::to_string(++row) + "/" + std::to_string(rows) + "] mr " + SizeText(size) +
                            (threads > 1 ? ", " + std::to_string(threads) + " threads" : ""));
            results->push_back(Measure(o, adapter, size, threads));
            Label(o, adapter, &results->back());
        }
    }
    return 0;
}

}  // namespace ndperf
