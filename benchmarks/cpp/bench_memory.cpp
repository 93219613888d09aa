// Times the source's NPCMemoryStream on the exact inputs bench_memory.py generated (read from a
// file before any timing). Prints one line per measured frame: record_us query_us sweep_us.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "npc_memory_stream.hpp"

template <typename T>
static void read_into(std::FILE* f, std::vector<T>& v, size_t n) {
    v.resize(n);
    if (std::fread(v.data(), sizeof(T), n, f) != n) {
        std::fprintf(stderr, "bench_memory: truncated input\n");
        std::exit(2);
    }
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: bench_memory INPUT\n");
        return 2;
    }
    std::FILE* f = std::fopen(argv[1], "rb");
    if (!f) return 2;
    int32_t hdr[4];  // npcs, frames, events per npc, warmup frames
    if (std::fread(hdr, sizeof(int32_t), 4, f) != 4) return 2;
    const size_t N = hdr[0], F = hdr[1], E = hdr[2], W = hdr[3];
    std::vector<float> now;
    std::vector<int32_t> npc;
    std::vector<uint32_t> ent, qent;
    std::vector<uint8_t> typ;
    std::vector<float> sal;
    read_into(f, now, F);
    read_into(f, npc, F * N * E);
    read_into(f, ent, F * N * E);
    read_into(f, typ, F * N * E);
    read_into(f, sal, F * N * E);
    read_into(f, qent, F * N);
    std::fclose(f);

    std::vector<NPCMemoryStream> streams(N);
    std::vector<float> sweep(N * NPCMemoryStream::MAX_CAPACITY);
    double checksum = 0.0;
    using clk = std::chrono::steady_clock;
    for (size_t fr = 0; fr < F; ++fr) {
        const float t = now[fr];
        const size_t base = fr * N * E;
        auto t0 = clk::now();
        for (size_t i = 0; i < N * E; ++i)
            streams[npc[base + i]].RecordEvent(ent[base + i], static_cast<MemoryType>(typ[base + i]), sal[base + i], t);
        auto t1 = clk::now();
        size_t found = 0;
        for (size_t i = 0; i < N; ++i) found += streams[i].QueryStrongestMemory(qent[fr * N + i], t) != nullptr;
        auto t2 = clk::now();
        size_t k = 0;
        for (size_t i = 0; i < N; ++i) k += streams[i].SweepRetrievability(t, sweep.data() + k);
        auto t3 = clk::now();
        checksum += found + sweep[k / 2];
        if (fr >= W) {
            auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
            std::printf("%.3f %.3f %.3f\n", us(t0, t1), us(t1, t2), us(t2, t3));
        }
    }
    std::fprintf(stderr, "checksum %.6f\n", checksum);
    return 0;
}
