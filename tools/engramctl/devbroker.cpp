#include "tools/engramctl/devbroker.hpp"

#include "actors/ingest/embedded_broker.hpp"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace engram::ctl {

int devbroker(const devbroker_options& o) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto started = engram::ingest::embedded_broker::start(o.topics, o.partitions);
  if (!started) {
    std::cerr << "devbroker: " << started.error() << "\n";
    return 1;
  }
  auto& broker = *started;
  if (!o.bootstrap_file.empty()) {
    // Written whole, then renamed: a reader never sees half an address.
    auto tmp = o.bootstrap_file + ".tmp";
    std::ofstream(tmp) << broker->bootstrap() << "\n";
    if (std::rename(tmp.c_str(), o.bootstrap_file.c_str()) != 0) {
      std::cerr << "devbroker: cannot write " << o.bootstrap_file << "\n";
      return 1;
    }
  }
  std::cout << broker->bootstrap() << std::endl;
  std::cerr << "devbroker: " << o.partitions << " partitions per topic; stop with SIGTERM or Ctrl-C\n"
            << "devbroker: a test broker (librdkafka's mock cluster, in memory): each partition keeps about "
               "5 MiB and silently drops its oldest records past that; Engram then stops at the gap (replay "
               "refuses it). Spread large streams over more partitions (--partitions), or use a real Kafka\n";
  std::cerr << "devbroker: SIGUSR1 takes the brokers down (an outage: connections closed and refused, data kept), "
               "SIGUSR2 brings them up\n";
  while (true) {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == SIGTERM || sig == SIGINT)
      return 0;
    const bool up = sig == SIGUSR2;
    if (auto set = broker->set_up(up); !set)
      std::cerr << "devbroker: " << set.error() << "\n";
    else
      std::cerr << "devbroker: brokers " << (up ? "up" : "down") << std::endl;
  }
}

}  // namespace engram::ctl
