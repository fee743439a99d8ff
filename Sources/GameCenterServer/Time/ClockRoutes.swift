import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// `POST /admin/v1/clock`: moves the server's clock forward, on servers started with `--test-clock` only.
struct ClockRoutes {
    let clock: ServerClock

    func add(to group: RouterGroup<AppRequestContext>) {
        group.post("clock") { request, context -> ClockReading in
            guard clock.isAdjustable else { throw APIError.clockFixed }
            let advance = try await request.decode(as: ClockAdvance.self, context: context)
            guard advance.seconds.isFinite, (0...31_536_000).contains(advance.seconds) else {
                throw APIError.invalidParameter("seconds must be 0 to 31536000 (a year); got \(advance.seconds)")
            }
            if let freezeAt = advance.freezeAt {
                let now = clock.nowMillis()
                guard advance.seconds == 0, let millis = StoredTime.checkedMillis(freezeAt), millis >= now, millis - now <= 31_536_000_000 else {
                    throw APIError.invalidParameter("freezeAt is a time from now to a year ahead (the clock goes only forward), without seconds")
                }
                return ClockReading(now: clock.freeze(atMillis: millis))
            }
            return ClockReading(now: clock.advance(byMillis: Int64((advance.seconds * 1000).rounded())))
        }
    }
}

extension ClockReading: ResponseEncodable {}

extension APIError {
    static let clockFixed = APIError(.adminClockFixed, "this server's clock cannot be moved; only servers started with --test-clock allow it")
}
