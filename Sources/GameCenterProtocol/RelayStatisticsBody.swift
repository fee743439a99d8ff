/// `GET /admin/v1/relay/statistics`: the relay's counters by name (forwarded, dropped, forged, replayed …).
public struct RelayStatisticsBody: Codable, Sendable, Equatable {
    public var counters: [String: Int]

    public init(counters: [String: Int]) {
        self.counters = counters
    }
}
