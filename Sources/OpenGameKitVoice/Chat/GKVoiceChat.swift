import Foundation
import GameCenterProtocol
import OpenGameKit
import Synchronization

/// One voice channel of a match: the members who joined it by name hear each other.
///
/// Get it from ``OpenGameKit/GKMatch/voiceChat(withName:)`` (the same object for the same name). Nothing is sent
/// or received until ``start()``; the microphone feeds the channel only while ``isActive`` (one channel per
/// device). Audio from every started channel is mixed into the match's one output (see
/// ``OpenGameKit/GKMatch/setVoiceAudio(source:sink:)``). The update handler is called on the voice engine's thread.
public final class GKVoiceChat: Sendable {
    /// The channel's name, the same on every device.
    public let name: String

    private struct State {
        var started = false
        var volume: Float = 1
        var muted: Set<String> = []
        var positions: [String: SIMD3<Float>] = [:]
        var listener = SIMD3<Float>(0, 0, 0)
        var handler: (@Sendable (String, GKVoiceChatPlayerState) -> Void)?
        var errorHandler: (@Sendable (GKError) -> Void)?
        var connected: Set<String> = []
        var speaking: Set<String> = []
    }

    private let engine: VoiceChatEngine
    private let state = Mutex(State())

    init(name: String, engine: VoiceChatEngine) {
        self.name = name
        self.engine = engine
    }

    /// The other members who started the channel: those this device hears (and who hear it).
    public var playerIDs: [String] { state.withLock { $0.connected.sorted() } }

    /// Starts receiving the channel's voice; the relay starts forwarding it to this device. Waits (and says so in
    /// ``waitingFor``) while the device has no microphone or speakers. When the channel cannot start (the match is
    /// disconnected, or voice chat became restricted: `parentalControlsBlocked`) it stays stopped and
    /// ``errorHandler`` hears why.
    public func start() {
        do {
            try engine.setMembership(.listening, of: self)
            state.withLock { $0.started = true }
        } catch {
            report(error)
        }
    }

    /// Stops receiving the channel: the relay stops sending its voice to this device (saving the bandwidth, unlike
    /// muting), and the microphone no longer feeds it. The microphone stops at once even when the relay cannot be
    /// told (a disconnected match); ``errorHandler`` hears that.
    public func stop() {
        state.withLock { $0.started = false }
        do {
            try engine.setMembership(.joined, of: self)
        } catch {
            report(error)
        }
    }

    /// Called, on the caller's thread, with the reason when ``start()`` or ``stop()`` could not tell the relay
    /// (beyond the seed, whose `start` and `stop` cannot fail visibly).
    public var errorHandler: (@Sendable (GKError) -> Void)? {
        get { state.withLock { $0.errorHandler } }
        set { state.withLock { $0.errorHandler = newValue } }
    }

    private func report(_ error: any Error) {
        let failure = error as? GKError ?? GKError(.unknown, "voice channel \(name) could not change: \(error)")
        state.withLock { $0.errorHandler }?(failure)
    }

    /// Whether the channel is started.
    public var isStarted: Bool { state.withLock { $0.started } }

    /// Whether this device's microphone feeds the channel. Only one channel of a device is active: making one
    /// active makes the previous one inactive. A channel that is not started sends nothing even when active.
    public var isActive: Bool {
        get { engine.activeChannel === self }
        set { engine.setActive(newValue ? self : nil, ifCurrently: newValue ? nil : self) }
    }

    /// The channel's volume, 0 (silent) to 1 (full); values outside are clamped.
    public var volume: Float {
        get { state.withLock { $0.volume } }
        set { state.withLock { $0.volume = min(max(newValue, 0), 1) } }
    }

    /// Silences (or, with false, restores) `playerID` in this channel, on this device only.
    public func setMute(_ isMuted: Bool, forPlayer playerID: String) {
        state.withLock {
            if isMuted { $0.muted.insert(playerID) } else { $0.muted.remove(playerID) }
        }
    }

    /// Called when a member starts or stops the channel (`connected`, `disconnected`) and starts or stops talking
    /// (`speaking`, `silent`).
    public var playerStateUpdateHandler: (@Sendable (String, GKVoiceChatPlayerState) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    /// Places `playerID` in the game's world (beyond the seed): farther is quieter, and left or right of the listener
    /// is panned there. A player with no position is heard centred at full level.
    public func setPosition(_ position: SIMD3<Float>, forPlayer playerID: String) {
        state.withLock { $0.positions[playerID] = position }
    }

    /// Where the local player listens from (facing −Z, up +Y).
    public var listenerPosition: SIMD3<Float> {
        get { state.withLock { $0.listener } }
        set { state.withLock { $0.listener = newValue } }
    }

    /// What the channel waits for before it can talk or play (no microphone, no speakers), or nil.
    public var waitingFor: String? { engine.waitingFor }

    /// For each member this device hears on the channel: their jitter buffer's counters and current delay in frames.
    package var jitter: [String: (statistics: VoiceJitterBuffer.Statistics, delay: Int)] { engine.jitter(on: name) }

    // MARK: For the engine

    /// How the engine mixes `playerID` of this channel: muted, and the position if one is set.
    func mixing(_ playerID: String) -> (volume: Float, muted: Bool, position: SIMD3<Float>?, listener: SIMD3<Float>) {
        state.withLock { ($0.volume, $0.muted.contains(playerID), $0.positions[playerID], $0.listener) }
    }

    /// Records a member's state; returns the handler to call when the state is news.
    func update(_ playerID: String, _ state: GKVoiceChatPlayerState) -> (@Sendable (String, GKVoiceChatPlayerState) -> Void)? {
        self.state.withLock { current in
            let changed: Bool
            switch state {
            case .connected: changed = current.connected.insert(playerID).inserted
            case .disconnected:
                current.speaking.remove(playerID)
                changed = current.connected.remove(playerID) != nil
            case .speaking: changed = current.connected.contains(playerID) && current.speaking.insert(playerID).inserted
            case .silent: changed = current.speaking.remove(playerID) != nil
            }
            return changed ? current.handler : nil
        }
    }
}
