import AudioFormat
import Loudness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LoudnessMeterTests {
    /// EBU Tech 3341's first case: a 1 kHz sine at −23 dBFS peak in both channels reads
    /// −23.0 LUFS, ±0.1 LU (the tolerance Tech 3341 gives).
    @Test func tech3341SineAtMinus23DBFSReadsMinus23LUFS() throws {
        let measurement = try measured(TestSignal.bytes(TestSignal.sine(peakDBFS: -23, seconds: 20), as: .s16LE),
                                       format: .s16())
        let integrated = try #require(measurement.integratedLoudness)
        print("LoudnessTests: Tech 3341 case 1 reads \(text(integrated)) LUFS")
        #expect(abs(integrated - -23) <= 0.1)
        #expect(try #require(measurement.loudnessRange) <= 0.1)
        #expect(abs(measurement.r128TrackGainQ78) <= 26)
    }

    @Test func silenceHasNoLoudnessAndNeutralTags() throws {
        let measurement = try measured([UInt8](repeating: 0, count: 5 * 48_000 * 4), format: .s16())
        #expect(measurement.integratedLoudness == nil)
        #expect(measurement.loudnessRange == nil)
        #expect(measurement.truePeak == 0)
        #expect(measurement.truePeakDBTP == nil)
        #expect(measurement.replayGainTrackGain == "+0.000 dB")
        #expect(measurement.replayGainTrackPeak == "0.000000")
        #expect(measurement.r128TrackGain == "+00000")
        #expect(measurement.summaryText == "loudness unmeasured (silence or under 0.4 s)")
        #expect(measurement.seconds == 5)
    }

    @Test func underFourHundredMillisecondsHasNoLoudnessButHasPeaks() throws {
        let measurement = try measured(TestSignal.bytes(TestSignal.sine(peakDBFS: -6, seconds: 0.39), as: .s16LE),
                                       format: .s16())
        #expect(measurement.integratedLoudness == nil)
        #expect(abs(try #require(measurement.samplePeakDBFS) - -6) < 0.01)
        #expect(measurement.summaryText.hasPrefix("loudness unmeasured (silence or under 0.4 s), true peak -6.0 dBTP"))
    }

    @Test func underThreeSecondsHasLoudnessButNoRange() throws {
        let measurement = try measured(TestSignal.bytes(TestSignal.sine(peakDBFS: -20, seconds: 2.9), as: .s16LE),
                                       format: .s16())
        #expect(measurement.integratedLoudness != nil)
        #expect(measurement.loudnessRange == nil)
    }

    @Test func resetStartsANewMeasurement() throws {
        let quiet = TestSignal.bytes(TestSignal.music(seconds: 4).map { $0 / 8 }, as: .s16LE)
        let meter = try #require(LoudnessMeter(format: .s16()))
        feed(meter, TestSignal.bytes(TestSignal.whiteNoise(peakDBFS: 0, seconds: 4), as: .s16LE))
        meter.reset()
        feed(meter, quiet)
        #expect(meter.measurement == (try measured(quiet, format: .s16())))
    }

    /// A recording split into two files, one meter each, measures about as one meter over the
    /// whole: only the blocks that would straddle the split are missing (400 ms gating blocks,
    /// and 3 s of short-term values for the range).
    @Test func combinedHalvesMeasureLikeTheWhole() throws {
        let samples = TestSignal.speechLike(seconds: 40)
        let bytes = TestSignal.bytes(samples, as: .s16LE)
        let whole = try measured(bytes, format: .s16())
        let first = try #require(LoudnessMeter(format: .s16()))
        let second = try #require(LoudnessMeter(format: .s16()))
        feed(first, Array(bytes[..<(bytes.count / 2)]))
        feed(second, Array(bytes[(bytes.count / 2)...]))
        let combined = LoudnessMeter.combined([first, second])
        print("""
            LoudnessTests: halves combined I \(text(combined.integratedLoudness)) LUFS, \
            LRA \(text(combined.loudnessRange)) LU; whole I \(text(whole.integratedLoudness)) LUFS, \
            LRA \(text(whole.loudnessRange)) LU
            """)
        #expect(abs(try #require(combined.integratedLoudness) - (try #require(whole.integratedLoudness))) <= 0.1)
        #expect(abs(try #require(combined.loudnessRange) - (try #require(whole.loudnessRange))) <= 0.3)
        #expect(combined.truePeak == whole.truePeak)
        #expect(combined.samplePeak == whole.samplePeak)
        #expect(combined.seconds == whole.seconds)
        #expect(LoudnessMeter.combined([first]) == first.measurement)
        #expect(LoudnessMeter.combined([]).integratedLoudness == nil)
    }

    /// BS.1770's weights through the channel map: the LFE is left out (loudness but no peak is
    /// lost), the 7.1 side pair counts 1.41 times (+1.49 dB) against the front pair, and the
    /// 7.1 back pair once.
    @Test func channelWeightsFollowTheLayout() throws {
        let format = PCMFormat.s16(channels: 8)
        let sevenOne = try #require(ChannelLayout.waveDefault(channels: 8))  // FL FR FC LFE RL RR SL SR
        func loudness(inChannels channels: [Int]) throws -> LoudnessMeasurement {
            let gains = (0..<8).map { channels.contains($0) ? 1.0 : 0.0 }
            let samples = TestSignal.scaled(TestSignal.sine(peakDBFS: -20, seconds: 4, channels: 8), channelGains: gains)
            return try measured(TestSignal.bytes(samples, as: .s16LE), format: format, layout: sevenOne)
        }
        let front = try #require(try loudness(inChannels: [0, 1]).integratedLoudness)
        let side = try #require(try loudness(inChannels: [6, 7]).integratedLoudness)
        let back = try #require(try loudness(inChannels: [4, 5]).integratedLoudness)
        let lfe = try loudness(inChannels: [3])
        #expect(abs(side - front - 10 * log10(1.41)) < 0.1)
        #expect(abs(back - front) < 0.1)
        #expect(lfe.integratedLoudness == nil)
        #expect(lfe.samplePeak > 0)

        // Without a layout, six channels are 5.1 (WAVE's default order): surrounds weighted 1.41.
        let fiveOne = try measured(
            TestSignal.bytes(TestSignal.scaled(TestSignal.sine(peakDBFS: -20, seconds: 4, channels: 6),
                                               channelGains: [0, 0, 0, 0, 1, 1]), as: .s16LE),
            format: .s16(channels: 6))
        #expect(abs(try #require(fiveOne.integratedLoudness) - front - 10 * log10(1.41)) < 0.1)
    }

    @Test func monoCountsOnce() throws {
        let stereo = try #require(try measured(TestSignal.bytes(TestSignal.sine(peakDBFS: -20, seconds: 4), as: .s16LE),
                                               format: .s16()).integratedLoudness)
        let mono = try #require(try measured(TestSignal.bytes(TestSignal.sine(peakDBFS: -20, seconds: 4, channels: 1),
                                                              as: .s16LE), format: .s16(channels: 1)).integratedLoudness)
        #expect(abs(stereo - mono - 10 * log10(2)) < 0.1)
    }

    /// More than 64 channels, a rate under 3,400 Hz (the K-weighting's shelf would lie above
    /// Nyquist) or over 2,822,400 Hz: no meter, and the recording goes on unmeasured.
    @Test func formatsOutsideTheMetersRangeGiveNoMeter() {
        #expect(LoudnessMeter(format: .s16(channels: 65)) == nil)
        #expect(LoudnessMeter(format: .s16(channels: 64)) != nil)
        #expect(LoudnessMeter(format: .s16(rate: 3_399)) == nil)
        #expect(LoudnessMeter(format: .s16(rate: 3_400)) != nil)
        #expect(LoudnessMeter(format: .s16(rate: 3_000_000)) == nil)
    }
}
