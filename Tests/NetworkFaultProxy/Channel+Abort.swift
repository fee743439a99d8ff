import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Channel {
    /// Closes the channel abruptly: SO_LINGER 0 makes the kernel send a reset and discard unsent bytes.
    ///
    /// Bytes still queued in the channel are failed, and the peer sees "connection reset" (or an end of stream)
    /// rather than an orderly close. Safe to call more than once and from any thread.
    func abort() {
        guard let provider = self as? any SocketOptionProvider else {
            close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in
            self.close(promise: nil)
        }
    }
}
