import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// The Game Center servers a device may use — the nodes of one deployment, all on one database — and the one it uses
/// now. A server that cannot be reached is left for the next one, round the list; with one server there is nothing to
/// move to.
final class ServerList: Sendable {
    /// Every server, in the order given.
    let urls: [URL]
    private let index = Mutex(0)

    init(_ urls: [URL]) {
        precondition(!urls.isEmpty, "a device needs at least one server")
        self.urls = urls
    }

    /// The server in use.
    var current: URL { urls[index.withLock { $0 }] }

    /// `url` could not be reached: the next server is used from now on (unless another caller moved on already).
    func unreachable(_ url: URL) {
        index.withLock { index in
            if urls[index] == url { index = (index + 1) % urls.count }
        }
    }

    /// Whether `error` says a connection to a server could not be made at all (so nothing was sent to it): refused,
    /// unreachable, or not established in time.
    static func isConnectionFailure(_ error: any Error) -> Bool {
        if error is NIOConnectionError { return true }
        if let error = error as? HTTPClientError, error == .connectTimeout { return true }
        if let error = error as? ChannelError, case .connectTimeout = error { return true }
        if let error = error as? IOError {
            // Not ETIMEDOUT: an established connection that timed out may have carried the request already.
            return [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode)
        }
        return false
    }
}
