// PulseAudio's simple API (libpulse-simple, Debian package libpulse-dev); PipeWire serves it through pipewire-pulse.
#if !__has_include(<pulse/simple.h>)
#error "OpenGameKitVoice needs libpulse-dev: apt-get install libpulse-dev"
#else
#include <pulse/simple.h>
#include <pulse/error.h>
#endif
