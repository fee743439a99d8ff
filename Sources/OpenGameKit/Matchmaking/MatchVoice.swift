import Foundation
import GameCenterProtocol
import Logging
import Synchronization

/// A match's voice transport: joining and leaving its voice channels on the relay, sending encoded voice to the
/// members receiving a channel, and hearing theirs. The audio itself (capture, codec, mixing) is
/// `OpenGameKitVoice`'s, which builds `GKVoiceChat` on this.
///
/// Packets travel like unreliable match data (sealed UDP, the WebSocket when UDP does not get through) and the
/// relay forwards them without looking inside. Observers are called on the SDK's network threads.
package final class MatchVoice: Sendable {
    /// What a match's voice observers hear.
    package enum Event: Sendable {
        /// A voice packet on `channel` from `player`.
        case packet(channel: String, payload: Data, from: String)
        /// `player` joined, started or stopped receiving, or left `channel`.
        case membership(channel: String, player: String, VoiceChannelMembership)
        /// `player` left the match (and so every channel).
        case memberLeft(String)
        /// The match is over for this device.
        case ended
    }

    /// The local player's id.
    package let localPlayerID: String
    /// The device's logger.
    package let logger: Logger
    private let relay: MatchRelayClient
    private let restriction: @Sendable () -> String?
    private let observers = Mutex<(next: Int, all: [Int: @Sendable (Event) -> Void])>((0, [:]))
    private let attached = Mutex<(any AnyObject & Sendable)?>(nil)

    /// `restriction` says why the local player may not talk (parental controls, the device's restrictions), or nil.
    init(localPlayerID: String, relay: MatchRelayClient, logger: Logger, restriction: @escaping @Sendable () -> String?) {
        self.localPlayerID = localPlayerID
        self.logger = logger
        self.relay = relay
        self.restriction = restriction
    }

    /// Joins (`.joined`), starts receiving (`.listening`) or leaves (`.none`) `channel`.
    ///
    /// Throws `parentalControlsBlocked` for an underage player or a device whose owner turned voice chat off,
    /// `invalidParameter` for a name outside `VoiceLimits` or a ninth channel, or once the match is disconnected.
    package func setChannel(_ channel: String, _ membership: VoiceChannelMembership) throws {
        if membership != .none, let restriction = restriction() {
            throw GKError(.parentalControlsBlocked, "voice chat is off for this player: \(restriction)")
        }
        try relay.setVoiceChannel(channel, membership)
    }

    /// Sends one voice packet on `channel` (which this device must have joined) to the members receiving it.
    ///
    /// Throws `invalidParameter` for a packet over `VoiceLimits.maximumPayloadBytes` or a channel not joined, and
    /// `communicationsFailure` when sending faster than the relay allows. Never blocks; may be lost like any
    /// unreliable data.
    package func send(_ payload: Data, on channel: String) throws {
        try relay.sendVoice(payload, on: channel)
    }

    /// The other members in `channel`, by player id, and whether each receives it.
    package func members(of channel: String) -> [String: VoiceChannelMembership] {
        relay.voiceMembers(of: channel)
    }

    /// Calls `observer` with every voice event from now on, until `stopObserving` with the returned id.
    package func observe(_ observer: @escaping @Sendable (Event) -> Void) -> Int {
        observers.withLock { observers in
            observers.next += 1
            observers.all[observers.next] = observer
            return observers.next
        }
    }

    /// Stops calling the observer `observe` returned `id` for.
    package func stopObserving(_ id: Int) {
        _ = observers.withLock { $0.all.removeValue(forKey: id) }
    }

    /// The object `make` returns, made on the first call and kept for the match's life: the voice engine that
    /// `OpenGameKitVoice` attaches to a match (one per match, whoever asks first).
    package func attachment<Attached: AnyObject & Sendable>(_ make: () -> Attached) -> Attached? {
        attached.withLock { attached in
            if let existing = attached { return existing as? Attached }
            let made = make()
            attached = made
            return made
        }
    }

    /// Tells every observer.
    func deliver(_ event: Event) {
        for observer in observers.withLock({ Array($0.all.values) }) { observer(event) }
    }
}
