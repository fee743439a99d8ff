import Foundation
import Logging

/// The microphone and speakers one voice engine uses: those the game gave, or the system's default devices
/// (PulseAudio/PipeWire), opened when first needed and looked for again every ``reopenInterval`` while missing.
///
/// Not thread-safe: its owner (the match's voice engine, the voice chat service) uses it under its own lock.
final class VoiceAudioDevices {
    /// How often a missing microphone or speaker is looked for again.
    static let reopenInterval = Duration.seconds(2)

    /// The microphone, when one is open or was given.
    private(set) var source: (any VoiceAudioSource)?
    /// The speakers, when open or given.
    private(set) var sink: (any VoiceAudioSink)?
    /// What is missing (a microphone, speakers), or nil.
    private(set) var waitingFor: String?
    private var systemSource = true
    private var systemSink = true
    private var lastOpenAttempt: ContinuousClock.Instant?

    /// A game's microphone and speakers on their way to an engine's devices.
    ///
    /// `@unchecked Sendable`: a game's source and sink need not be Sendable, and the game may keep its own references
    /// (a test reads what its sink recorded), so the compiler cannot check the hand-over; the engine uses them only
    /// under its `Mutex`.
    struct Given: @unchecked Sendable {
        /// The microphone, or nil for the system's.
        var source: (any VoiceAudioSource)?
        /// The speakers, or nil for the system's.
        var sink: (any VoiceAudioSink)?
    }

    /// Uses the `given` source and sink from now on (nil: the system's default devices).
    func use(_ given: Given) {
        source = given.source
        sink = given.sink
        systemSource = given.source == nil
        systemSink = given.sink == nil
        lastOpenAttempt = nil
    }

    /// Opens the system's devices where none was given, at most every ``reopenInterval``; logs what is missing once.
    func openIfDue(logger: Logger) {
        let now = ContinuousClock.now
        guard (systemSource && source == nil) || (systemSink && sink == nil) else { return }
        if let last = lastOpenAttempt, now - last < Self.reopenInterval { return }
        lastOpenAttempt = now
        var missing: [String] = []
        if systemSource && source == nil {
            do { source = try PulseAudioSource() } catch { missing.append("\(error)") }
        }
        if systemSink && sink == nil {
            do { sink = try PulseAudioSink() } catch { missing.append("\(error)") }
        }
        let waiting = missing.isEmpty ? nil : missing.joined(separator: "; ")
        if waiting != waitingFor, let waiting { logger.notice("voice chat waits: \(waiting)") }
        waitingFor = waiting
    }

    /// Forgets a microphone that failed (a system one is looked for again).
    func microphoneFailed() { source = nil }

    /// Forgets speakers that failed (system ones are looked for again).
    func speakersFailed() { sink = nil }
}
