import Logging
import ServiceLifecycle
import Synchronization

/// Samples the server's own metrics every ``interval`` into ``MetricsHistory``, for the studio console's charts
/// of the last hours. Runs in the application's service group; the ring is this node's alone.
final class MetricsSampler: Service {
    /// How often a sample is taken.
    let interval: Duration
    private let routes: MetricsRoutes
    private let clock: ServerClock
    private let history = Mutex(MetricsHistory())

    init(routes: MetricsRoutes, clock: ServerClock, interval: Duration) {
        self.routes = routes
        self.clock = clock
        self.interval = interval
    }

    /// The samples so far, oldest first.
    var samples: [MetricsHistory.Sample] { history.withLock { Array($0.samples) } }

    /// Takes one sample now.
    func sample() {
        let text = String(decoding: routes.scrape(), as: UTF8.self)
        let now = clock.nowMillis()
        history.withLock { $0.record(exposition: text, at: now) }
    }

    func run() async throws {
        sample()
        await cancelWhenGracefulShutdown {
            while (try? await Task.sleep(for: self.interval)) != nil { self.sample() }
        }
    }
}
