import CoreMetrics
import GameCenterStorage
import Hummingbird
import NIOCore
import Synchronization

/// `GET /metrics` (behind the admin key): every metric in Prometheus text format. The relay's counters, which the
/// datagram path keeps as plain atomics, and the count of SQL statements sent (`storage.statements`) are brought up
/// to date on each scrape.
struct MetricsRoutes: Sendable {
    let metrics: ServerMetrics
    let relay: RelayExport
    let storage: StatementExport

    init(metrics: ServerMetrics, relayStatistics: RelayStatistics, statements: StatementCounter) {
        self.metrics = metrics
        self.relay = RelayExport(statistics: relayStatistics, factory: metrics.factory)
        self.storage = StatementExport(counter: statements, factory: metrics.factory)
    }

    func add(to group: RouterGroup<AppRequestContext>) {
        group.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: scrape())))
        }
    }

    /// Every metric as Prometheus text, the relay's counters and the statement count brought up to date first (the
    /// scrape's answer, and what ``MetricsSampler`` reads).
    func scrape() -> [UInt8] {
        relay.update()
        storage.update()
        return metrics.exposition()
    }

    /// The database's statement count as the `storage.statements` counter.
    final class StatementExport: Sendable {
        private let counter: StatementCounter
        private let metric: CoreMetrics.Counter
        private let exported = Mutex(0)

        init(counter: StatementCounter, factory: any MetricsFactory) {
            self.counter = counter
            self.metric = CoreMetrics.Counter(label: "storage.statements", factory: factory)
        }

        /// Adds the statements sent since the last scrape.
        func update() {
            let value = counter.value
            exported.withLock { exported in
                if value > exported { metric.increment(by: value - exported) }
                exported = max(exported, value)
            }
        }
    }

    /// The relay's counters as `relay.*` counters (`relay.forwarded` for unreliable messages forwarded).
    final class RelayExport: Sendable {
        private let statistics: RelayStatistics
        private let counters: [RelayStatistics.Counter: CoreMetrics.Counter]
        private let exported = Mutex<[String: Int]>([:])

        init(statistics: RelayStatistics, factory: any MetricsFactory) {
            self.statistics = statistics
            var counters: [RelayStatistics.Counter: CoreMetrics.Counter] = [:]
            for counter in RelayStatistics.Counter.allCases {
                counters[counter] = CoreMetrics.Counter(label: "relay." + Self.label(counter), factory: factory)
            }
            self.counters = counters
        }

        /// Adds what each relay counter gained since the last scrape.
        func update() {
            let snapshot = statistics.snapshot()
            exported.withLock { exported in
                for (counter, metric) in counters {
                    let name = String(describing: counter), value = snapshot[name] ?? 0
                    let gained = value - exported[name, default: 0]
                    if gained > 0 { metric.increment(by: gained) }
                    exported[name] = value
                }
            }
        }

        /// `unreliableForwarded` → `forwarded`; other cases in snake case (`datagramsForged` → `datagrams_forged`).
        static func label(_ counter: RelayStatistics.Counter) -> String {
            if counter == .unreliableForwarded { return "forwarded" }
            var label = ""
            for character in String(describing: counter) {
                if character.isUppercase { label += "_" + character.lowercased() } else { label.append(character) }
            }
            return label
        }
    }
}
