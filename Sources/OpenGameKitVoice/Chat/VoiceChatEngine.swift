import Foundation
import GameCenterProtocol
import Logging
import OpenGameKit

/// A match's voice on one device: its channels, the microphone feeding the active one, and every started
/// channel's members decoded, placed and mixed into one output, every 20 ms on a thread of its own.
///
/// Packets arrive on the SDK's network threads (``receive(_:)``) into per-channel receive pipelines; the engine's
/// thread reads the microphone, sends, ticks the pipelines, mixes and plays. One lock guards all of it; handlers
/// are called outside it.
/// `@unchecked Sendable`: state behind `lock`; the game's audio source and sink (not Sendable) are used only under it.
final class VoiceChatEngine: @unchecked Sendable {
    private let transport: MatchVoice
    private let logger: Logger
    private let lock = NSLock()
    private var channels: [String: GKVoiceChat] = [:]
    private var receivers: [String: VoiceReceivePipeline] = [:]
    private var sender: VoiceSendPipeline?
    private var active: GKVoiceChat?
    /// The channel the microphone fed on the last tick.
    private var feeding: String?
    private let devices = VoiceAudioDevices()
    private var mixer = VoiceMixer()
    private var played: [Int16]?
    private var running = false
    private var ended = false
    private var observation: Int?

    init(transport: MatchVoice) {
        self.transport = transport
        self.logger = transport.logger
        let observation = transport.observe { [weak self] event in self?.receive(event) }
        lock.withLock { self.observation = observation }
    }

    // MARK: Channels

    /// The channel named `name`, joining it on first use.
    func channel(named name: String) throws -> GKVoiceChat {
        if let existing = lock.withLock({ channels[name] }) { return existing }
        try transport.setChannel(name, .joined)
        return lock.withLock {
            if let existing = channels[name] { return existing }
            let chat = GKVoiceChat(name: name, engine: self)
            channels[name] = chat
            return chat
        }
    }

    /// Tells the relay that this device receives (`.listening`) or stopped (`.joined`) `chat`; starts the engine's
    /// thread with the first started channel. Throws why the relay could not be told (a disconnected match, voice
    /// chat restricted), changing nothing.
    func setMembership(_ membership: VoiceChannelMembership, of chat: GKVoiceChat) throws {
        try transport.setChannel(chat.name, membership)
        let startThread = lock.withLock { () -> Bool in
            if membership == .listening {
                if receivers[chat.name] == nil { receivers[chat.name] = try? VoiceReceivePipeline() }
            } else {
                receivers[chat.name] = nil
            }
            guard membership == .listening, !running, !ended else { return false }
            running = true
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
            VoiceFrameClock.start(name: "OGK voice", running: { [self] in lock.withLock { !ended } }, tick: { [self] in tick() })
        }
    }

    /// The channel the microphone feeds.
    var activeChannel: GKVoiceChat? { lock.withLock { active } }

    /// Makes `chat` the active channel (nil: none); with `ifCurrently`, only when that channel is the active one.
    func setActive(_ chat: GKVoiceChat?, ifCurrently current: GKVoiceChat?) {
        lock.withLock {
            if let current, active !== current { return }
            active = chat
        }
    }

    /// For each member heard on `channel`: their jitter buffer's counters and current delay in frames (for benches).
    func jitter(on channel: String) -> [String: (statistics: VoiceJitterBuffer.Statistics, delay: Int)] {
        lock.withLock {
            guard let receiver = receivers[channel] else { return [:] }
            var all: [String: (statistics: VoiceJitterBuffer.Statistics, delay: Int)] = [:]
            for sender in receiver.senders {
                if let statistics = receiver.statistics(for: sender), let delay = receiver.delay(for: sender) { all[sender] = (statistics, delay) }
            }
            return all
        }
    }

    /// What the engine waits for (a microphone, speakers), or nil.
    var waitingFor: String? { lock.withLock { devices.waitingFor } }

    /// Uses `source` and `sink` from now on (nil: the system's default devices).
    func setAudio(source: (any VoiceAudioSource)?, sink: (any VoiceAudioSink)?) {
        lock.withLock { devices.use(source: source, sink: sink) }
    }

    // MARK: Receiving

    private func receive(_ event: MatchVoice.Event) {
        switch event {
        case .packet(let channel, let payload, let player):
            lock.withLock {
                guard let receiver = receivers[channel] else { return }
                do {
                    try receiver.receive([UInt8](payload), from: player)
                } catch {
                    logger.debug("dropped a voice packet", metadata: [LogKey.playerID: "\(player)", LogKey.error: "\(error)"])
                }
            }
        case .membership(let channel, let player, let membership):
            guard let chat = lock.withLock({ receivers[channel] != nil ? channels[channel] : nil }) else { return }
            let state: GKVoiceChatPlayerState = membership == .listening ? .connected : .disconnected
            if state == .disconnected { lock.withLock { receivers[channel]?.remove(player) } }
            chat.update(player, state)?(player, state)
        case .memberLeft(let player):
            let all = lock.withLock { () -> [GKVoiceChat] in
                for receiver in receivers.values { receiver.remove(player) }
                return Array(channels.values)
            }
            for chat in all { chat.update(player, .disconnected)?(player, .disconnected) }
        case .ended:
            let observation = lock.withLock { () -> Int? in
                ended = true
                return self.observation
            }
            if let observation { transport.stopObserving(observation) }
        }
    }

    // MARK: The audio thread

    /// Every 20 ms until the match ends: microphone → active channel; started channels → mix → speakers.
    private func tick() {
        openDevicesIfDue()
        talk()
        listen()
    }

    private func openDevicesIfDue() {
        lock.withLock { devices.openIfDue(logger: logger) }
    }

    /// Reads one microphone frame and sends it on the active channel when that channel is started. When the
    /// microphone stops feeding a channel mid-speech (push-to-talk released, another channel made active, the channel
    /// stopped, the source ended), that channel gets one packet flagged silent first, so its listeners fall silent at
    /// once.
    private func talk() {
        let packets = lock.withLock { () -> [(channel: String, bytes: [UInt8])] in
            guard let source = devices.source else { return [] }
            let read: VoiceFrameRead
            do {
                read = try source.readFrame()
            } catch {
                logger.warning("the microphone failed: \(error)")
                devices.microphoneFailed()
                return []
            }
            var packets: [(channel: String, bytes: [UInt8])] = []
            // A source that ended (a WAV file read to its end) cuts the talk spurt like a released push-to-talk key.
            let target = read == .end ? nil : active.flatMap { $0.isStarted ? $0.name : nil }
            do {
                if let fed = feeding, fed != target, let end = try sender?.finish() { packets.append((fed, end.bytes)) }
                feeding = target
                guard case .frame(let captured) = read, let target else { return packets }
                if sender == nil { sender = try VoiceSendPipeline() }
                if let packet = try sender!.process(captured, played: played) { packets.append((target, packet.bytes)) }
            } catch {
                logger.warning("voice could not be encoded: \(error)")
            }
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
        var changes: [(GKVoiceChat, String, GKVoiceChatPlayerState)] = []
        lock.withLock {
            var streams: [String: [Int16]] = [:]
            for (name, receiver) in receivers {
                guard let chat = channels[name] else { continue }
                let positional = try? PositionalAudio()
                for (player, frame) in receiver.tick() {
                    changes.append((chat, player, frame.speaking ? .speaking : .silent))
                    let key = "\(name)\u{0}\(player)"
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
                    try? mixer.set(settings, for: key)
                    streams[key] = frame.samples
                }
            }
            guard let sink = devices.sink, !streams.isEmpty || played != nil else { return }
            do {
                let out = try mixer.mix(streams)
                try sink.writeFrame(out)
                played = stride(from: 0, to: out.count, by: 2).map { Int16((Int32(out[$0]) + Int32(out[$0 + 1])) / 2) }
            } catch {
                logger.warning("the speakers failed: \(error)")
                devices.speakersFailed()
            }
        }
        for (chat, player, state) in changes { chat.update(player, state)?(player, state) }
    }
}
