/* mpi_pingpong: the MPI baseline for bench/compare (what osu_latency
 * measures, which Debian does not package). Two ranks bounce one message
 * with MPI_Send/MPI_Recv; every sample is one round trip, halved. Prints
 * one JSON line: {"tool":"mpi_pingpong","size","iters","median_us",
 * "p99_us","min_us"}. bench/compare builds it with mpicc and runs it under
 * mpirun with the transport it names (e.g. --mca btl self,vader).
 *
 *   mpirun -np 2 ./mpi_pingpong [SIZE [ITERS [WARMUP]]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int Compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    long size = argc > 1 ? atol(argv[1]) : 8;
    long iters = argc > 2 ? atol(argv[2]) : 100000;
    long warmup = argc > 3 ? atol(argv[3]) : iters / 10;
    if (ranks != 2 || size < 0 || iters < 1 || warmup < 0) {
        if (rank == 0) fprintf(stderr, "mpi_pingpong: needs exactly 2 ranks, SIZE >= 0, ITERS >= 1\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = malloc(size ? (size_t)size : 1);
    double *samples = rank == 0 ? malloc(sizeof(double) * (size_t)iters) : NULL;
    if (!buf || (rank == 0 && !samples)) {
        fprintf(stderr, "mpi_pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, rank, size ? (size_t)size : 1);
    MPI_Barrier(MPI_COMM_WORLD);
    /* One clock read per round trip, as ndperf takes its samples: round
     * trip i runs from one read to the next. */
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
        long p99 = (long)((double)(iters - 1) * 0.99);
        printf("{\"tool\":\"mpi_pingpong\",\"size\":%ld,\"iters\":%ld,\"median_us\":%.4f,\"p99_us\":%.4f,"
               "\"min_us\":%.4f}\n",
               size, iters, samples[iters / 2], samples[p99], samples[0]);
    }
    free(samples);
    free(buf);
    MPI_Finalize();
    return 0;
}
