// See interrupt.hpp.
#include "core/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace kevo {
namespace {

std::atomic<int> requested{0};

extern "C" void on_interrupt(int signal) {
    if (requested.exchange(signal) != 0) {
        // The second signal: the user means it.
        std::signal(signal, SIG_DFL);
        std::raise(signal);
    }
}

}  // namespace

void install_interrupt_handlers() {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: a blocking wait returns EINTR and notices the request
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

bool interrupt_requested() { return requested.load() != 0; }
int interrupt_signal() { return requested.load(); }

const char* interrupt_signal_name() {
    switch (requested.load()) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        default: return "a signal";
    }
}

}  // namespace kevo
