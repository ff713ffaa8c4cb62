// Ctrl-C (SIGINT) and SIGTERM as a request to stop, not a kill: long work polls
// interrupt_requested() between steps and winds down cleanly (a run is marked interrupted, its
// best kernel is on disk, how to resume is printed). A second signal ends the process at once, as
// the default action would.
#pragma once

namespace kevo {

void install_interrupt_handlers();
bool interrupt_requested();
// The signal that asked to stop (SIGINT, SIGTERM), 0 when none did.
int interrupt_signal();
// "SIGINT", "SIGTERM" or "a signal".
const char* interrupt_signal_name();

}  // namespace kevo
