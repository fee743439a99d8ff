import Foundation
import GameCenterProtocol
import Logging
import OpenGameKit
import Synchronization

/// A match's voice on one device: its channels, the microphone feeding the active one, and every started
/// channel's members decoded, placed and mixed into one output, every 20 ms on a thread of its own.
///
/// Packets arrive on the SDK's network threads (``receive(_:)``) into per-channel receive pipelines; the engine's
/// thread reads the microphone, sends, ticks the pipelines, mixes and plays. One `Mutex` guards all of it; handlers
/// are called outside it.
final class VoiceChatEngine: Sendable {
    /// Everything the engine changes, under one `Mutex`.
    private struct State {
        /// The channels joined, by name.
        var channels: [String: GKVoiceChat] = [:]
        /// The started channels' receive pipelines, by channel name.
        var receivers: [String: VoiceReceivePipeline] = [:]
        /// The channel the microphone feeds.
        var active: GKVoiceChat?
        /// The channel the microphone fed on the last tick.
        var feeding: String?
        /// The microphone, speakers, encoder and mixer.
        var audio: VoiceAudioEngine
        /// Whether the 20 ms thread runs.
        var running = false
        /// Whether the match ended (the thread then stops).
        var ended = false
        /// The engine's observation of the match's voice.
        var observation: Int?
    }

    private let transport: MatchVoice
    private let logger: Logger
    private let state: Mutex<State>

    init(transport: MatchVoice) {
        self.transport = transport
        self.logger = transport.logger
        state = Mutex(State(audio: VoiceAudioEngine(logger: transport.logger)))
        let observation = transport.observe { [weak self] event in self?.receive(event) }
        state.withLock { $0.observation = observation }
    }

    // MARK: Channels

    /// The channel named `name`, joining it on first use.
    func channel(named name: String) throws -> GKVoiceChat {
        if let existing = state.withLock({ $0.channels[name] }) { return existing }
        try transport.setChannel(name, .joined)
        return state.withLock { state in
            if let existing = state.channels[name] { return existing }
            let chat = GKVoiceChat(name: name, engine: self)
            state.channels[name] = chat
            return chat
        }
    }

    /// Tells the relay that this device receives (`.listening`) or stopped (`.joined`) `chat`; starts the engine's
    /// thread with the first started channel. Throws why the relay could not be told (a disconnected match, voice
    /// chat restricted), changing nothing.
    func setMembership(_ membership: VoiceChannelMembership, of chat: GKVoiceChat) throws {
        try transport.setChannel(chat.name, membership)
        let startThread = state.withLock { state -> Bool in
            if membership == .listening {
                if state.receivers[chat.name] == nil { state.receivers[chat.name] = try? VoiceReceivePipeline() }
            } else {
                state.receivers[chat.name] = nil
            }
            guard membership == .listening, !state.running, !state.ended else { return false }
            state.running = true
            return true
        }
        if membership != .listening {
            // This device no longer hears the channel: its members are gone from here.
            for player in chat.playerIDs { chat.update(player, .disconnected)?(player, .disconnected) }
        } else {
            for (player, theirs) in transport.members(of: chat.name) where theirs == .listening {
                chat.update(player, .connected)?(player, .connected)
            }
        }
        if startThread {
            VoiceFrameClock.start(name: "OGK voice", running: { [self] in state.withLock { !$0.ended } }, tick: { [self] in tick() })
        }
    }

    /// The channel the microphone feeds.
    var activeChannel: GKVoiceChat? { state.withLock { $0.active } }

    /// Makes `chat` the active channel (nil: none); with `ifCurrently`, only when that channel is the active one.
    func setActive(_ chat: GKVoiceChat?, ifCurrently current: GKVoiceChat?) {
        state.withLock { state in
            if let current, state.active !== current { return }
            state.active = chat
        }
    }

    /// For each member heard on `channel`: their jitter buffer's counters and current delay in frames (for benches).
    func jitter(on channel: String) -> [String: (statistics: VoiceJitterBuffer.Statistics, delay: Int)] {
        state.withLock { state in
            guard let receiver = state.receivers[channel] else { return [:] }
            var all: [String: (statistics: VoiceJitterBuffer.Statistics, delay: Int)] = [:]
            for sender in receiver.senders {
                if let statistics = receiver.statistics(for: sender), let delay = receiver.delay(for: sender) { all[sender] = (statistics, delay) }
            }
            return all
        }
    }

    /// What the engine waits for (a microphone, speakers), or nil.
    var waitingFor: String? { state.withLock { $0.audio.devices.waitingFor } }

    /// Uses `source` and `sink` from now on (nil: the system's default devices).
    func setAudio(source: (any VoiceAudioSource)?, sink: (any VoiceAudioSink)?) {
        let given = VoiceAudioDevices.Given(source: source, sink: sink)
        state.withLock { $0.audio.devices.use(given) }
    }

    // MARK: Receiving

    private func receive(_ event: MatchVoice.Event) {
        switch event {
        case .packet(let channel, let payload, let player):
            state.withLock { state in
                guard let receiver = state.receivers[channel] else { return }
                do {
                    try receiver.receive([UInt8](payload), from: player)
                } catch {
                    logger.debug("dropped a voice packet", metadata: [LogKey.playerID: "\(player)", LogKey.error: "\(error)"])
                }
            }
        case .membership(let channel, let player, let membership):
            guard let chat = state.withLock({ $0.receivers[channel] != nil ? $0.channels[channel] : nil }) else { return }
            let playerState: GKVoiceChatPlayerState = membership == .listening ? .connected : .disconnected
            if playerState == .disconnected {
                state.withLock { state in
                    state.receivers[channel]?.remove(player)
                    state.audio.forget(Self.streamKey(channel, player))
                }
            }
            chat.update(player, playerState)?(player, playerState)
        case .memberLeft(let player):
            let all = state.withLock { state -> [GKVoiceChat] in
                for (channel, receiver) in state.receivers {
                    receiver.remove(player)
                    state.audio.forget(Self.streamKey(channel, player))
                }
                return Array(state.channels.values)
            }
            for chat in all { chat.update(player, .disconnected)?(player, .disconnected) }
        case .ended:
            let observation = state.withLock { state -> Int? in
                state.ended = true
                return state.observation
            }
            if let observation { transport.stopObserving(observation) }
        }
    }

    // MARK: The audio thread

    /// Every 20 ms until the match ends: microphone → active channel; started channels → mix → speakers.
    private func tick() {
        talk()
        listen()
    }

    /// Reads one microphone frame and sends it on the active channel when that channel is started. When the
    /// microphone stops feeding a channel mid-speech (push-to-talk released, another channel made active, the channel
    /// stopped, the source ended), that channel gets one packet flagged silent first, so its listeners fall silent at
    /// once.
    private func talk() {
        let packets = state.withLock { state -> [(channel: String, bytes: [UInt8])] in
            guard let read = state.audio.readMicrophone() else { return [] }
            var packets: [(channel: String, bytes: [UInt8])] = []
            // A source that ended (a WAV file read to its end) cuts the talk spurt like a released push-to-talk key.
            let target = read == .end ? nil : state.active.flatMap { $0.isStarted ? $0.name : nil }
            if let fed = state.feeding, fed != target, let end = state.audio.endTalkSpurt() { packets.append((fed, end.bytes)) }
            state.feeding = target
            guard case .frame(let captured) = read, let target else { return packets }
            if let packet = state.audio.encode(captured) { packets.append((target, packet.bytes)) }
            return packets
        }
        for packet in packets {
            do {
                try transport.send(Data(packet.bytes), on: packet.channel)
            } catch {
                logger.debug("a voice packet was not sent: \(error)")
            }
        }
    }

    /// Plays 20 ms of every started channel, mixed, and tells who started or stopped talking.
    private func listen() {
        let changes = state.withLock { state -> [(GKVoiceChat, String, GKVoiceChatPlayerState)] in
            var changes: [(GKVoiceChat, String, GKVoiceChatPlayerState)] = []
            var streams: [String: (samples: [Int16], settings: VoiceMixer.StreamSettings)] = [:]
            for (name, receiver) in state.receivers {
                guard let chat = state.channels[name] else { continue }
                let positional = try? PositionalAudio()
                for (player, frame) in receiver.tick() {
                    changes.append((chat, player, frame.speaking ? .speaking : .silent))
                    let mixing = chat.mixing(player)
                    var settings = VoiceMixer.StreamSettings()
                    settings.muted = mixing.muted
                    settings.gain = mixing.volume
                    if let position = mixing.position, var positional {
                        positional.listenerPosition = mixing.listener
                        let placement = positional.placement(of: position)
                        settings.gain *= placement.gain
                        settings.pan = placement.pan
                    }
                    streams[Self.streamKey(name, player)] = (frame.samples, settings)
                }
            }
            _ = state.audio.play(streams)
            return changes
        }
        for (chat, player, state) in changes { chat.update(player, state)?(player, state) }
    }

    /// The mixer's name for `player`'s voice on `channel` (a player may be heard on several channels at once).
    private static func streamKey(_ channel: String, _ player: String) -> String { "\(channel)\u{0}\(player)" }
}
