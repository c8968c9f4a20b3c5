import AudioFormat
import Testing

/// Channel layouts and the orders the formats want them in.
@Suite struct ChannelLayoutTests {
    func layout(_ text: String) -> ChannelLayout { ChannelLayout(parsing: text)! }

    @Test func parsingTakesALSANamesAndRefusesUnknownOrRepeatedOnes() {
        #expect(ChannelLayout(parsing: "fl, FR,fc")?.positions == [.frontLeft, .frontRight, .frontCenter])
        #expect(ChannelLayout(parsing: "FL,FL") == nil)
        #expect(ChannelLayout(parsing: "FL,XX") == nil)
        #expect(ChannelLayout(parsing: "") == nil)
    }

    @Test func vorbisOrderForEachFamilyOneLayout() {
        // WAVE-ordered devices, into RFC 7845's Vorbis order.
        #expect(layout("FL,FR,FC").vorbisOrder == [0, 2, 1])
        #expect(layout("FL,FR,RL,RR").vorbisOrder == [0, 1, 2, 3])
        #expect(layout("FL,FR,FC,RL,RR").vorbisOrder == [0, 2, 1, 3, 4])
        #expect(layout("FL,FR,FC,LFE,RL,RR").vorbisOrder == [0, 2, 1, 4, 5, 3])
        #expect(layout("FL,FR,FC,LFE,SL,SR").vorbisOrder == [0, 2, 1, 4, 5, 3], "5.1 with the side pair")
        #expect(layout("FL,FR,FC,LFE,RC,SL,SR").vorbisOrder == [0, 2, 1, 5, 6, 4, 3])
        #expect(layout("FL,FR,FC,LFE,RL,RR,SL,SR").vorbisOrder == [0, 2, 1, 6, 7, 4, 5, 3])
        #expect(layout("FL,FR,FC,LFE,FLC,FRC").vorbisOrder == nil)
        #expect(layout("FL,FR").vorbisOrder == nil, "family 0 needs no order")
    }

    @Test func stereoOrderPutsLeftFirst() {
        #expect(layout("FL,FR").stereoOrder == [0, 1])
        #expect(layout("FR,FL").stereoOrder == [1, 0])
        #expect(layout("FC,LFE").stereoOrder == nil, "not a left-right pair: kept as it is")
        #expect(layout("FL,FR,FC").stereoOrder == nil)
    }

    @Test func waveOrderAndMask() {
        let vorbisFive = layout("FL,FC,FR,RL,RR,LFE")
        #expect(vorbisFive.waveOrder == [0, 2, 1, 5, 3, 4])
        #expect(vorbisFive.waveMask == 0x3F)
        #expect(layout("FL,FR,FC,LFE,SL,SR").waveMask == 0x60F)
        #expect(layout("MONO").waveMask == nil && layout("MONO").waveOrder == nil)
        for channels in 1...8 {
            let standard = ChannelLayout.waveDefault(channels: channels)!
            #expect(standard.waveOrder == Array(0..<channels), "\(channels) channels")
        }
    }
}
