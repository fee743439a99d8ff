import Foundation
import JMESPath

/// Game Center's additions to JMESPath, as Apple documents them for matchmaking rule expressions: `areCompatibleAppVersions`,
/// `geoLatency`, `agedAsSteppedValue` (also under the name `agedValueLinear` that one of Apple's examples uses),
/// `agedValues`, `hasInvitedPlayersOnSameTeam`, `if`, `div`, `sub`, `asSet`, `diff` and `intersection`.
package enum RuleFunctions {
    /// The built-in JMESPath functions plus Game Center's. `compatibleAppVersions` lists groups of app versions that
    /// play together (a version is always compatible with itself).
    package static func table(compatibleAppVersions: [[String]] = []) -> JMESPathFunctions {
        let groups = compatibleAppVersions.map(Set.init)
        let aged = JMESPathFunction(name: "agedAsSteppedValue", parameters: [.number, .number, .number, .number, .number]) {
            arguments throws(JMESPathError) in
            let (age, initial, limit, interval, change) = (
                try arguments.number(0), try arguments.number(1), try arguments.number(2), try arguments.number(3), try arguments.number(4)
            )
            guard interval > 0 else {
                throw JMESPathError(.invalidValue, "agedAsSteppedValue(): ageIntervalSeconds must be more than 0, given \(JSONValue.number(interval))")
            }
            let value = initial + change * (max(age, 0) / interval).rounded(.down)
            return .number(change >= 0 ? min(value, limit) : max(value, limit))
        }
        return JMESPathFunctions.builtIn
            .adding("areCompatibleAppVersions", parameters: [.object, .object]) { arguments throws(JMESPathError) in
                let first = try arguments.object(0)["appVersion"]
                let second = try arguments.object(1)["appVersion"]
                guard case .string(let a)? = first, case .string(let b)? = second else { return false }
                return .bool(a == b || groups.contains { $0.contains(a) && $0.contains(b) })
            }
            .adding("geoLatency", parameters: [.object, .object]) { arguments throws(JMESPathError) in
                .number(geographicDistance(try arguments.object(0), try arguments.object(1)))
            }
            .adding(aged)
            .adding(JMESPathFunction(name: "agedValueLinear", parameters: aged.parameters, body: aged.body))
            .adding("agedValues", parameters: [.number, .number, .arrayOfNumbers, .arrayOfNumbers]) { arguments throws(JMESPathError) in
                let (age, initial) = (try arguments.number(0), try arguments.number(1))
                let (values, ages) = (try arguments.numbers(2), try arguments.numbers(3))
                guard values.count == ages.count else {
                    throw JMESPathError(
                        .invalidValue, "agedValues(): the values (\(values.count)) and ages (\(ages.count)) arrays must be equally long")
                }
                guard let step = ages.lastIndex(where: { $0 <= age }) else { return .number(initial) }
                return .number(values[step])
            }
            .adding("hasInvitedPlayersOnSameTeam", parameters: [.array, .array]) { arguments throws(JMESPathError) in
                var teamOfPlayer: [String: Int] = [:]
                for (index, team) in try arguments.array(0).enumerated() {
                    guard case .object(let team) = team, case .array(let players)? = team["players"] else { continue }
                    for case .object(let player) in players {
                        if case .string(let id)? = player["playerId"] { teamOfPlayer[id] = index }
                    }
                }
                var teamOfRequest: [String: Int] = [:]
                for case .object(let player) in try arguments.array(1) {
                    guard case .string(let id)? = player["playerId"], case .string(let request)? = player["requestName"],
                        let team = teamOfPlayer[id]
                    else { continue }
                    if let other = teamOfRequest.updateValue(team, forKey: request), other != team { return false }
                }
                return true
            }
            .adding("if", parameters: [.any, .any, .any]) { arguments throws(JMESPathError) in
                try arguments.value(0).isTruthy ? arguments.value(1) : arguments.value(2)
            }
            .adding("div", parameters: [.number, .number]) { arguments throws(JMESPathError) in
                let divisor = try arguments.number(1)
                return divisor == 0 ? .null : .number(try arguments.number(0) / divisor)
            }
            .adding("sub", parameters: [.any, .any]) { arguments throws(JMESPathError) in
                guard case .number(let minuend) = try arguments.value(0), case .number(let subtrahend) = try arguments.value(1) else { return .null }
                return .number(minuend - subtrahend)
            }
            .adding("asSet", parameters: [.array]) { arguments throws(JMESPathError) in
                .array(naturalSet(try arguments.array(0)))
            }
            .adding("diff", parameters: [.arrayOfNumbers]) { arguments throws(JMESPathError) in
                let numbers = try arguments.numbers(0)
                guard let low = numbers.min(), let high = numbers.max() else { return .null }
                return .number(high - low)
            }
            .adding("intersection", parameters: [.array]) { arguments throws(JMESPathError) in
                var common: Set<JSONValue>?
                for (index, element) in try arguments.array(0).enumerated() {
                    guard case .array(let items) = element else {
                        throw JMESPathError(.invalidType, "intersection(): element \(index + 1) of the argument must be an array, given \(element.typeName)")
                    }
                    common = common.map { $0.intersection(items) } ?? Set(items)
                }
                return .array(naturalSet(Array(common ?? [])))
            }
    }

    /// The distinct values in their natural order: numbers ascending, then strings by code point, then the rest by
    /// their JSON text.
    static func naturalSet(_ values: [JSONValue]) -> [JSONValue] {
        func rank(_ value: JSONValue) -> Int {
            switch value {
            case .number: 0
            case .string: 1
            default: 2
            }
        }
        return Set(values).sorted { a, b in
            switch (a, b) {
            case (.number(let x), .number(let y)): return x < y
            case (.string(let x), .string(let y)): return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars)
            default: return rank(a) != rank(b) ? rank(a) < rank(b) : a.description < b.description
            }
        }
    }

    /// How far apart two requests' devices are, from 0 (same place) to 1 (opposite sides of the Earth): the great
    /// circle between their `latitude` and `longitude`. A request without a location is taken as far away (1).
    static func geographicDistance(_ a: [String: JSONValue], _ b: [String: JSONValue]) -> Double {
        guard case .number(let lat1)? = a["latitude"], case .number(let lon1)? = a["longitude"],
            case .number(let lat2)? = b["latitude"], case .number(let lon2)? = b["longitude"]
        else { return 1 }
        let radians = Double.pi / 180
        let (phi1, phi2) = (lat1 * radians, lat2 * radians)
        let (dPhi, dLambda) = ((lat2 - lat1) * radians, (lon2 - lon1) * radians)
        let h = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        let angle = 2 * atan2(sqrt(h), sqrt(max(0, 1 - h)))
        return min(1, max(0, angle / Double.pi))
    }
}

extension [JMESPathArgument] {
    /// Argument `index`'s value (the table's type checks have run).
    fileprivate func value(_ index: Int) throws(JMESPathError) -> JSONValue {
        guard index < count, case .value(let value) = self[index] else {
            throw JMESPathError(.invalidType, "argument \(index + 1) must be a value, not an expression reference")
        }
        return value
    }

    fileprivate func number(_ index: Int) throws(JMESPathError) -> Double {
        guard case .number(let number) = try value(index) else { throw JMESPathError(.invalidType, "argument \(index + 1) must be a number") }
        return number
    }

    fileprivate func array(_ index: Int) throws(JMESPathError) -> [JSONValue] {
        guard case .array(let array) = try value(index) else { throw JMESPathError(.invalidType, "argument \(index + 1) must be an array") }
        return array
    }

    fileprivate func object(_ index: Int) throws(JMESPathError) -> [String: JSONValue] {
        guard case .object(let object) = try value(index) else { throw JMESPathError(.invalidType, "argument \(index + 1) must be an object") }
        return object
    }

    fileprivate func numbers(_ index: Int) throws(JMESPathError) -> [Double] {
        var numbers: [Double] = []
        for element in try array(index) {
            guard case .number(let number) = element else { throw JMESPathError(.invalidType, "argument \(index + 1) must be an array of numbers") }
            numbers.append(number)
        }
        return numbers
    }
}
