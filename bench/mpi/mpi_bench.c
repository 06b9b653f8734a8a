/* mpi_bench: the MPI baseline for bench/compare, what osu_latency and
 * osu_bw measure (Debian does not package the OSU benchmarks). Two ranks;
 * bench/compare builds it with mpicc and runs it under mpirun with the
 * transport it names (e.g. --mca pml ob1 --mca btl self,vader).
 *
 *   mpirun -np 2 ./mpi_bench lat SIZE ITERS [WARMUP]
 *       MPI_Send/MPI_Recv ping-pong; one sample per round trip, halved (one
 *       clock read per round trip, as ndperf takes its samples). Prints
 *       {"tool","test":"lat","size","iters","median_us","p99_us","min_us"}.
 *   mpirun -np 2 ./mpi_bench bw SIZE ITERS [WINDOW]
 *       rank 0 sends ITERS messages, WINDOW at a time (MPI_Isend, then
 *       MPI_Waitall), rank 1 receives them likewise into posted MPI_Irecv
 *       and answers each window with 4 bytes. Prints {"tool","test":"bw",
 *       "size","iters","window","gbps","gbps_median","mmsgps","seconds"}:
 *       the overall rate and the median of the windows' rates (1e9 B/s).
 * Exit status 0, 1 failure, 2 bad usage.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int Compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *Alloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "mpi_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static void Latency(int rank, long size, long iters, long warmup) {
    char *buf = Alloc((size_t)size);
    double *samples = rank == 0 ? Alloc(sizeof(double) * (size_t)iters) : NULL;
    memset(buf, rank, size ? (size_t)size : 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double last = MPI_Wtime();
    for (long i = 0; i < warmup + iters; ++i) {
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double now = MPI_Wtime();
            if (i >= warmup) samples[i - warmup] = (now - last) * 1e6 / 2;
            last = now;
        } else {
            MPI_Recv(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        qsort(samples, (size_t)iters, sizeof(double), Compare);
        printf("{\"tool\":\"mpi_bench\",\"test\":\"lat\",\"size\":%ld,\"iters\":%ld,\"median_us\":%.4f,"
               "\"p99_us\":%.4f,\"min_us\":%.4f}\n",
               size, iters, samples[iters / 2], samples[(long)((double)(iters - 1) * 0.99)], samples[0]);
    }
    free(samples);
    free(buf);
}

static void Bandwidth(int rank, long size, long iters, long window) {
    long rounds = (iters + window - 1) / window;
    char *buf = Alloc((size_t)size);  /* one buffer, as osu_bw and ucx_perftest reuse theirs */
    MPI_Request *reqs = Alloc(sizeof(MPI_Request) * (size_t)window);
    double *rates = rank == 0 ? Alloc(sizeof(double) * (size_t)rounds) : NULL;
    int ack = 0;
    memset(buf, rank, size ? (size_t)size : 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime(), last = start;
    for (long r = 0, sent = 0; r < rounds; ++r) {
        long n = iters - sent < window ? iters - sent : window;
        for (long k = 0; k < n; ++k) {
            if (rank == 0)
                MPI_Isend(buf, (int)size, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &reqs[k]);
            else
                MPI_Irecv(buf, (int)size, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &reqs[k]);
        }
        MPI_Waitall((int)n, reqs, MPI_STATUSES_IGNORE);
        if (rank == 0) {
            MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double now = MPI_Wtime();
            rates[r] = (double)n * (double)size / (now - last) / 1e9;
            last = now;
        } else {
            MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        }
        sent += n;
    }
    if (rank == 0) {
        double seconds = last - start;
        qsort(rates, (size_t)rounds, sizeof(double), Compare);
        printf("{\"tool\":\"mpi_bench\",\"test\":\"bw\",\"size\":%ld,\"iters\":%ld,\"window\":%ld,\"gbps\":%.6g,"
               "\"gbps_median\":%.6g,\"mmsgps\":%.6g,\"seconds\":%.6g}\n",
               size, iters, window, (double)iters * (double)size / seconds / 1e9, rates[rounds / 2],
               (double)iters / seconds / 1e6, seconds);
    }
    free(rates);
    free(reqs);
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const char *test = argc > 1 ? argv[1] : "";
    long size = argc > 2 ? atol(argv[2]) : -1;
    long iters = argc > 3 ? atol(argv[3]) : 0;
    long extra = argc > 4 ? atol(argv[4]) : -1;
    int lat = strcmp(test, "lat") == 0, bw = strcmp(test, "bw") == 0;
    if (ranks != 2 || (!lat && !bw) || size < 0 || size > (1L << 30) || iters < 1 || (bw && argc > 4 && extra < 1)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 mpi_bench lat SIZE ITERS [WARMUP] | bw SIZE ITERS [WINDOW]\n");
        MPI_Finalize();
        return 2;
    }
    if (lat)
        Latency(rank, size, iters, extra >= 0 ? extra : iters / 10);
    else
        Bandwidth(rank, size, iters, extra > 0 ? extra : 32);
    MPI_Finalize();
    return 0;
}
