// HOLD model on ns-3's event schedulers, for bench/hold.sh: n events
// pending; each firing schedules its successor at now + an exponential
// increment of mean 1 s, drawn beforehand into a ring of 65,536 values as
// the Go benchmarks do (engine/bench_test.go), so that neither side times
// its random number generator. Prints ns per event after a warm-up of 2n
// events.
//
// Usage: ns3_hold SCHEDULER N EVENTS
//   SCHEDULER: PriorityQueue, Map, Heap, Calendar, List (ns3::<X>Scheduler)
#include "ns3/core-module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace ns3;

static std::vector<Time> incs;
static uint64_t fired = 0, stopAt = 0, next = 0;

static void
Fire()
{
    Simulator::Schedule(incs[next++ & 65535], &Fire);
    if (++fired == stopAt)
    {
        Simulator::Stop();
    }
}

int
main(int argc, char* argv[])
{
    if (argc != 4)
    {
        std::fprintf(stderr, "usage: %s SCHEDULER N EVENTS\n", argv[0]);
        return 2;
    }
    std::string sched = std::string("ns3::") + argv[1] + "Scheduler";
    uint64_t n = std::strtoull(argv[2], nullptr, 10), events = std::strtoull(argv[3], nullptr, 10);
    std::mt19937_64 rng(1);
    std::exponential_distribution<double> exp1(1.0);
    for (int i = 0; i < 65536; i++)
    {
        incs.push_back(NanoSeconds(static_cast<int64_t>(exp1(rng) * 1e9)));
    }
    ObjectFactory f;
    f.SetTypeId(sched);
    Simulator::SetScheduler(f);
    for (uint64_t i = 0; i < n; i++)
    {
        Simulator::Schedule(incs[next++ & 65535], &Fire);
    }
    stopAt = 2 * n;
    Simulator::Run();
    stopAt = fired + events;
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / events;
    std::printf("ns-3 %s n=%llu %.1f ns/event\n", argv[1], static_cast<unsigned long long>(n), ns);
    Simulator::Destroy();
    return 0;
}
